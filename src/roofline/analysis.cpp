#include "roofline/analysis.h"

#include <fmt/format.h>

#include <algorithm>

namespace kopt::roofline {

std::string_view describe(Mode m) {
  switch (m) {
    case Mode::kWorkloadModel: return "workload_model";
    case Mode::kBottleneckGapHeuristic: return "bottleneck_gap_heuristic";
  }
  return "?";
}

std::string_view describe(Verdict v) {
  switch (v) {
    case Verdict::kNearPeak: return "near_peak";
    case Verdict::kBelowPeak: return "below_peak";
    case Verdict::kBelowFloor: return "below_floor";
    case Verdict::kHeuristicOnly: return "heuristic_only";
  }
  return "?";
}

std::string_view explain(Verdict v) {
  switch (v) {
    case Verdict::kNearPeak: return "near peak: the time is within reach of the floor the ceilings allow";
    case Verdict::kBelowPeak: return "below peak: the time is above the floor by more than the near-peak margin";
    case Verdict::kBelowFloor:
      return "BELOW THE FLOOR: faster than the ceilings allow; check the measurement (L2-resident data between "
             "repetitions, a skipped launch), the kernel's output, and the workload model's flops/bytes_min";
    case Verdict::kHeuristicOnly:
      return "no workload model: gaps from Nsight Compute utilisation only (a heuristic; never near peak)";
  }
  return "?";
}

Result<RooflineResult> analyze(const Ceilings& c, const RooflineInput& in, const AnalyzeOptions& o) {
  KOPT_TRY(validate(in.time));
  KOPT_TRY(validate(o.budget));
  RooflineResult r;
  r.kernel = in.kernel;
  r.time = in.time;
  std::optional<double> dram_gbps;
  if (auto d = c.dram_roof()) dram_gbps = c.find(*d)->value;
  KOPT_TRY_ASSIGN(r.util, utilisation_from_ncu(in.ncu_metrics, dram_gbps));
  for (const auto& why : r.util.ignored) r.notes.push_back(why);
  BudgetInput b;
  if (in.model) {
    r.mode = Mode::kWorkloadModel;
    KOPT_TRY_ASSIGN(Floor f, compute_floor(c, *in.model, in.buffer_dtypes));
    KOPT_TRY_ASSIGN(Efficiency e, assess(f, in.time, o.near_peak_efficiency));
    r.verdict = e.below_floor ? Verdict::kBelowFloor : e.near_peak ? Verdict::kNearPeak : Verdict::kBelowPeak;
    // The hardware's own utilisation (ncu) wins; the model fills what ncu did not measure.
    if (!r.util.compute) {
      r.util.compute = std::min(1.0, f.compute_floor_ms / in.time.median_ms);
      r.util.sources["compute"] = "workload model: compute floor / time";
    }
    if (!r.util.memory) {
      r.util.memory = std::min(1.0, f.memory_floor_ms / in.time.median_ms);
      r.util.sources["memory"] = "workload model: memory floor / time";
    }
    if (f.floor_ms == f.compute_floor_ms && f.compute_floor_ms == f.memory_floor_ms)
      r.notes.push_back("compute and memory floors are equal");
    for (const auto& t : f.terms)
      if (t.source == CeilingSource::kDatasheet)
        r.notes.push_back(std::string(roof_info(t.choice.roof).name) + " is a datasheet value, not measured");
    if (f.dram_source == CeilingSource::kDatasheet) r.notes.push_back("the DRAM ceiling is a datasheet value");
    for (const auto& u : f.unmodelled) r.notes.push_back(u);
    b.near_peak = e.near_peak;
    b.below_floor = e.below_floor;
    b.efficiency = e.efficiency;
    b.bytes_min = f.bytes_min;
    r.floor = std::move(f);
    r.efficiency = e;
  } else {
    r.mode = Mode::kBottleneckGapHeuristic;
    r.verdict = Verdict::kHeuristicOnly;
    if (in.ncu_metrics.empty()) r.notes.push_back("no workload model and no ncu metrics: nothing to compare");
  }
  r.gaps = axis_gaps(r.util);
  r.bound = bound_axis(r.util, o.budget.latency_bound_below);
  if (!r.bound && r.mode == Mode::kBottleneckGapHeuristic)
    r.notes.push_back("bound unknown: needs both " + std::string(ncu::kSmThroughput) + " and " + ncu::kMemThroughput);
  b.bound = r.bound;
  b.util = r.util;
  b.gaps = r.gaps;
  KOPT_TRY_ASSIGN(r.budget, split_budget(b, o.budget));
  return r;
}

namespace {

util::Json opt(const std::optional<double>& v) { return v ? util::Json(*v) : util::Json(nullptr); }

std::string pct(const std::optional<double>& v) { return v ? fmt::format("{:.1f}%", *v * 100) : "unknown"; }

}  // namespace

util::Json to_json(const RooflineResult& r) {
  util::Json j = {{"mode", describe(r.mode)},
                  {"kernel", r.kernel},
                  {"verdict", describe(r.verdict)},
                  {"verdict_text", explain(r.verdict)},
                  {"near_peak", r.near_peak()},
                  {"below_floor", r.below_floor()},
                  {"time", {{"median_ms", r.time.median_ms}, {"noise_ms", r.time.noise_ms}}}};
  if (r.floor) {
    const Floor& f = *r.floor;
    util::Json terms = util::Json::array();
    for (const auto& t : f.terms)
      terms.push_back({{"dtype", t.dtype},
                       {"roof", roof_info(t.choice.roof).name},
                       {"rule", t.choice.rule},
                       {"flops", t.flops},
                       {"peak_tflops", t.peak_tflops},
                       {"peak_source", describe(t.source)},
                       {"time_ms", t.time_ms}});
    j["floor"] = {{"flops", f.flops},
                  {"bytes_min", f.bytes_min},
                  {"compute_terms", terms},
                  {"compute_floor_ms", f.compute_floor_ms},
                  {"memory_floor_ms", f.memory_floor_ms},
                  {"floor_ms", f.floor_ms},
                  {"binding", axis_name(f.binding)},
                  {"dram_roof", roof_info(f.dram_roof).name},
                  {"dram_gbps", f.dram_gbps},
                  {"dram_source", describe(f.dram_source)},
                  {"dram_rule", f.dram_rule},
                  {"read_fraction", opt(f.read_fraction)},
                  {"arithmetic_intensity", opt(f.arithmetic_intensity)}};
  } else {
    j["floor"] = nullptr;
  }
  if (r.efficiency) {
    j["efficiency"] = r.efficiency->efficiency;
    j["achieved_tflops"] = r.efficiency->achieved_tflops;
    j["achieved_gbps"] = r.efficiency->achieved_gbps;
  } else {
    j["efficiency"] = nullptr;
  }
  j["utilisation"] = {{"compute", opt(r.util.compute)},     {"memory", opt(r.util.memory)},
                      {"dram", opt(r.util.dram)},           {"issue", opt(r.util.issue)},
                      {"occupancy", opt(r.util.occupancy)}, {"dram_bytes", opt(r.util.dram_bytes)},
                      {"top_stall", r.util.top_stall ? util::Json(*r.util.top_stall) : util::Json(nullptr)},
                      {"top_stall_ratio", opt(r.util.top_stall_ratio)},
                      {"sources", r.util.sources},
                      {"ignored", r.util.ignored}};
  j["gaps"] = {{"compute", opt(r.gaps.compute)}, {"memory", opt(r.gaps.memory)}, {"latency", opt(r.gaps.latency)}};
  j["bound"] = r.bound ? util::Json(axis_name(*r.bound)) : util::Json(nullptr);
  util::Json methods = util::Json::object(), weights = util::Json::object();
  for (const auto& [a, n] : r.budget.methods) methods[std::string(axis_name(a))] = n;
  for (const auto& [a, w] : r.budget.weights) weights[std::string(axis_name(a))] = w;
  j["budget"] = {{"methods", methods}, {"weights", weights}, {"reasons", r.budget.reasons}};
  j["notes"] = r.notes;
  return j;
}

std::string format_text(const RooflineResult& r) {
  std::string s = fmt::format("Roofline of {} [mode: {}]\n", r.kernel.empty() ? "the kernel" : r.kernel, describe(r.mode));
  s += fmt::format("  time        {:.4f} ms (noise {:.4f} ms)\n", r.time.median_ms, r.time.noise_ms);
  if (r.floor && r.efficiency) {
    const Floor& f = *r.floor;
    for (const auto& t : f.terms)
      s += fmt::format("  compute     {:.4g} FLOP on {} at {:.1f} {} ({}) = {:.4f} ms; {}\n", t.flops,
                       roof_info(t.choice.roof).name, t.peak_tflops, roof_info(t.choice.roof).unit, describe(t.source),
                       t.time_ms, t.choice.rule);
    s += fmt::format("  memory      {:.4g} bytes_min at {:.0f} GB/s ({} {}) = {:.4f} ms\n", f.bytes_min, f.dram_gbps,
                     roof_info(f.dram_roof).name, describe(f.dram_source), f.memory_floor_ms);
    if (!f.dram_rule.empty()) s += fmt::format("              DRAM rate: {}\n", f.dram_rule);
    s += fmt::format("  floor       {:.4f} ms, {}-bound by the model", f.floor_ms, axis_name(f.binding));
    if (f.arithmetic_intensity) s += fmt::format(", {:.2f} FLOP/byte", *f.arithmetic_intensity);
    s += "\n";
    s += fmt::format("  achieved    {:.2f} TFLOP/s, {:.0f} GB/s (of bytes_min)\n", r.efficiency->achieved_tflops,
                     r.efficiency->achieved_gbps);
    s += fmt::format("  efficiency  {:.1f}% of the floor\n", r.efficiency->efficiency * 100);
  }
  s += fmt::format("  verdict     {}\n", explain(r.verdict));
  s += fmt::format("  utilisation compute {}, memory {}, issue {}, occupancy {}\n", pct(r.util.compute),
                   pct(r.util.memory), pct(r.util.issue), pct(r.util.occupancy));
  s += fmt::format("  gaps        Δc {}, Δm {}, Δl {}; bound: {}\n", pct(r.gaps.compute), pct(r.gaps.memory),
                   pct(r.gaps.latency), r.bound ? std::string(axis_name(*r.bound)) : "unknown");
  s += fmt::format("  budget      compute {}, memory {}, latency {}\n", r.budget.methods.at(Axis::kCompute),
                   r.budget.methods.at(Axis::kMemory), r.budget.methods.at(Axis::kLatency));
  for (const auto& why : r.budget.reasons) s += "              " + why + "\n";
  for (const auto& n : r.notes) s += "  note        " + n + "\n";
  return s;
}

}  // namespace kopt::roofline
