// What a run leaves for people: summary.json and summary.md (and the page made from them), the champion's source beside
// the baseline's, and the summary's tables made from the history.
#include <algorithm>

#include "loop/optimizer.h"
#include "pipeline/triton.h"
#include "report/html.h"
#include "report/summary.h"
#include "search/llm_usage.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

util::Json candidate_costs(const std::vector<search::Measurement>& history) {
  std::vector<double> compile, sass, measure, cases, gpu;
  for (const auto& m : history) {
    if (m.candidate.id == "baseline" || m.measure_ms <= 0) continue;
    compile.push_back(m.compile_ms);
    sass.push_back(m.sass_ms);
    measure.push_back(m.measure_ms);
    cases.push_back(m.cases_ms);
    gpu.push_back(m.measure_ms + m.cases_ms);
  }
  auto median = [](std::vector<double> v) { return v.empty() ? 0.0 : runner::compute_stats(v).median_ms; };
  auto p90 = [](std::vector<double> v) { return v.empty() ? 0.0 : runner::compute_stats(v).p90_ms; };
  auto split = [&](auto f) {
    return util::Json{{"compile", f(compile)}, {"sass", f(sass)}, {"measure", f(measure)}, {"cases", f(cases)},
                      {"measure_all_cases", f(gpu)}};
  };
  return {{"candidates", measure.size()},
          {"median_ms", split(median)},
          {"p90_ms", split(p90)},
          {"note", "per measured candidate, wall: its nvcc (batches compile in parallel), its SASS analysis (beside the "
                   "measuring), its race against the champion at the primary case (measure; compile excluded), its races "
                   "or checks at the workload matrix's other cases (cases), and the two together (measure_all_cases)"}};
}

util::Json reuse_summary(const std::vector<search::Measurement>& history, const std::vector<search::Measurement>& ablations,
                          const std::vector<std::string>& raced_again) {
  util::Json rows = util::Json::array();
  int evaluations = 0;
  for (const auto* list : {&history, &ablations})
    for (const auto& m : *list) {
      if (m.candidate.id == "baseline") continue;
      ++evaluations;
      // Raced again, it was measured in this run. adopt_faster_variants now replaces such an ablation record; this
      // also holds for a state.json written before it did (a resumed run's summary is made from it).
      if (m.reused.is_null() || std::find(raced_again.begin(), raced_again.end(), m.candidate.id) != raced_again.end()) continue;
      util::Json r = m.reused;
      r["id"] = m.candidate.id;
      r["iteration"] = m.iteration;
      r["status"] = search::candidate_status_name(m.status);
      r["ablation"] = list == &ablations;
      rows.push_back(r);
    }
  return {{"evaluations", evaluations}, {"reused", rows.size()}, {"raced_again", raced_again}, {"records", rows}};
}

Status Optimizer::write_summary() {
  auto s = summary_json();
  KOPT_TRY(write_json(dir_ / "summary.json", "summary", s));
  KOPT_TRY(util::write_file_atomic(dir_ / "summary.md", report::render_markdown(s)));
  // The page (report/html.h) is a view of the files above: a failure to render it is said, not fatal.
  if (auto page = report::write_html(dir_); !page) say("  summary.html not written: {}", page.error().message);
  return ok_status();
}

Status Optimizer::write_champion() {
  if (!st_.champion) return ok_status();
  const auto& c = st_.champion->candidate;
  fs::path cdir = dir_ / "champion";
  fs::create_directories(cdir);
  KOPT_TRY_ASSIGN(std::string src, util::read_file(c.source));
  std::string head = fmt::format("// kopt champion {} ({:.4f} ms; baseline {:.4f} ms)\n// methods: {}\n", c.id,
                                 st_.champion->median_ms, st_.baseline ? st_.baseline->median_ms : 0.0,
                                 c.methods.empty() ? "none" : util::join(c.methods, ", "));
  if (!c.flags.empty()) head += "// build with these extra nvcc flags: " + util::join(c.flags, " ") + "\n";
  const std::string warning = st_.gate_records.contains("holdout") ? st_.gate_records["holdout"].value("warning", std::string()) : "";
  if (!warning.empty()) head += "// WARNING: " + warning + "\n";
  std::string name = o_.job.kernel.filename().string();
  if (triton()) {
    // A Python kernel takes its configuration as run_kernel's keyword arguments: written beside it.
    util::Json cfg = pipeline::triton_config(c);
    std::string py_head;
    for (const auto& line : util::split_lines(head)) py_head += "#" + line.substr(2) + "\n";
    py_head += "# run_kernel(**inputs, **KOPT_CHAMPION_CONFIG)\nKOPT_CHAMPION_CONFIG = " + cfg.dump() + "\n";
    KOPT_TRY(util::write_file_atomic(cdir / name, py_head + "\n" + src));
    KOPT_TRY(write_json(cdir / "config.json", "champion_config", {{"config", cfg}}));
  } else {
    for (const auto& [k, v] : c.defines) head += "#define " + k + " " + v + "\n";
    KOPT_TRY(util::write_file_atomic(cdir / name, head + "\n" + src));
  }
  // The baseline beside it, written the same way (its own values in the same place), so the two files' diff is the
  // change (summary.html shows it): the source as the run read it, whatever happens to the user's file later.
  std::string baseline_name;
  if (st_.baseline) {
    const auto& b = st_.baseline->candidate;
    auto bsrc = util::read_file(b.source);
    if (bsrc) {
      baseline_name = "baseline_" + name;
      std::string bhead = fmt::format("// kopt baseline ({:.4f} ms)\n// methods: {}\n", st_.baseline->median_ms,
                                      b.methods.empty() ? "none" : util::join(b.methods, ", "));
      if (!b.flags.empty()) bhead += "// build with these extra nvcc flags: " + util::join(b.flags, " ") + "\n";
      if (triton()) {
        std::string py_head;
        for (const auto& line : util::split_lines(bhead)) py_head += "#" + line.substr(2) + "\n";
        py_head += "# run_kernel(**inputs, **KOPT_CHAMPION_CONFIG)\nKOPT_CHAMPION_CONFIG = " + pipeline::triton_config(b).dump() + "\n";
        KOPT_TRY(util::write_file_atomic(cdir / baseline_name, py_head + "\n" + *bsrc));
      } else {
        for (const auto& [k, v] : b.defines) bhead += "#define " + k + " " + v + "\n";
        KOPT_TRY(util::write_file_atomic(cdir / baseline_name, bhead + "\n" + *bsrc));
      }
    }
  }
  return write_json(cdir / "champion.json", "champion",
                    {{"candidate", search::to_json(c)}, {"median_ms", st_.champion->median_ms}, {"file", (cdir / name).string()},
                     {"baseline_file", baseline_name.empty() ? util::Json(nullptr) : util::Json((cdir / baseline_name).string())}});
}

namespace {
util::Json headline_json(const RunState& st) {
  record::Headline h;  // summary.json's headline, the run record's (record/summary_record.h)
  if (st.baseline) h.baseline_ms = st.baseline->median_ms;
  if (st.champion) {
    h.champion_ms = st.champion->median_ms;
    h.champion_id = st.champion->candidate.id;
    if (st.baseline) h.speedup_vs_baseline = st.baseline->median_ms / st.champion->median_ms;
    if (st.reference_ms > 0) {
      h.reference_ms = st.reference_ms;
      h.speedup_vs_reference = st.reference_ms / st.champion->median_ms;
    }
  }
  const auto& g = st.gate_records;
  if (g.contains("holdout") && !g["holdout"].value("warning", std::string()).empty())
    h.warning = g["holdout"]["warning"].get<std::string>();
  return record::to_json(h);
}

// Issue 18's gates: the cases (requested vs realised dims), the per-case table, the held-out shapes, the
// sanitizer's race safety, the determinism checks and what the gates rejected or flagged.
util::Json gates_json(const RunState& st, const GateOptions& o) {
  const auto& g = st.gate_records;
  util::Json gates = {{"race_safe", sanitize::race_safe_name(st.race_safe)},
                      {"sanitize", sanitize::policy_name(o.sanitize)},
                      {"workload_matrix", workload::matrix_mode_name(o.workload_matrix)},
                      {"no_regressions", o.no_regressions},
                      {"champion_gates", champion_gates_name(o.champion_gates)},
                      {"baseline_profile", baseline_profile_name(o.baseline_profile)}};
  // Whether the champion passed its determinism check and sanitizer (the baseline's own gates are its sanitizer run).
  if (st.champion && st.champion->candidate.id != "baseline")
    gates["champion_verified"] = st.verified_as_champion(st.champion->candidate.id);
  for (const char* k : {"cases", "baseline_sanitizer", "champion_sanitizer", "rejected", "flagged", "determinism",
                        "final_verification", "ephemeral_seed", "baseline_profile_deferred"})
    if (g.contains(k)) gates[k] = g[k];
  return gates;
}

util::Json roofline_summary(const util::Json& r) {
  record::RooflineSummary rs;  // summary.json's roofline, the run record's (record/summary_record.h)
  rs.mode = r.value("mode", std::string());
  rs.verdict = r.value("verdict", std::string());
  rs.near_peak = rs.verdict == "near_peak";
  if (r.contains("floor") && r["floor"].is_object()) {
    rs.floor_ms = r["floor"].value("floor_ms", 0.0);
    rs.bound = r["floor"].value("binding", std::string());
  }
  if (r.contains("efficiency") && r["efficiency"].is_number()) rs.efficiency = r["efficiency"].get<double>();
  return record::to_json(rs);
}

util::Json methods_json(const std::vector<search::MethodVerdict>& verdicts) {
  util::Json methods = util::Json::object();
  for (auto v : {search::Verdict::kEffective, search::Verdict::kMeasuredEffective, search::Verdict::kIneffective,
                 search::Verdict::kImplementationFailed, search::Verdict::kUnverified, search::Verdict::kNotAblatable})
    methods[std::string(search::verdict_name(v))] = util::Json::array();
  for (const auto& v : verdicts) {
    std::string figure = v.saved_ms ? fmt::format("; off costs {:+.4f} ms, 95% CI [{:+.4f}, {:+.4f}]", *v.saved_ms,
                                                  *v.saved_ci95_low_ms, *v.saved_ci95_high_ms)
                                    : "";
    methods[std::string(search::verdict_name(v.verdict))].push_back(fmt::format("{} (iteration {}{})", v.method, v.iteration, figure));
  }
  return methods;
}

// Issue 39 item 2(b): the warm start's points, where each came from, the candidate it became and what it measured here.
util::Json warm_start_json(const RunState& st) {
  util::Json points = util::Json::array();
  for (const auto& p : st.warm_start) {
    util::Json e = to_json(p);
    e["median_ms_here"] = nullptr;
    e["status_here"] = nullptr;
    for (const auto& m : st.history)
      if (!p.candidate_id.empty() && m.candidate.id == p.candidate_id) {
        e["status_here"] = search::candidate_status_name(m.status);
        if (m.median_ms) e["median_ms_here"] = *m.median_ms;
      }
    points.push_back(e);
  }
  return {{"points", points}};
}
}  // namespace

util::Json Optimizer::summary_json() {
  util::Json s;
  s["schema"] = report::kSummarySchema;
  s["meta"] = util::make_meta("summary");
  s["kernel"] = o_.job.kernel.string();
  s["dims"] = format_dims(o_.job.dims);
  s["numerics_mode"] = search::numerics_mode_name(o_.job.numerics);
  s["generator"] = generator_text(o_.generator);
  s["sizes_guessed"] = prep_.sizes_guessed;
  s["headline"] = headline_json(st_);
  const auto& g = st_.gate_records;
  s["gates"] = gates_json(st_, o_.gates);
  if (g.contains("case_table")) s["cases"] = g["case_table"];
  // The headline's times are the primary case's: said when it is not the user's dims (fitted or another case).
  if (!cases_.empty() && cases_[primary_].c.realised != o_.job.dims)
    s["timed_at"] = {{"case", cases_[primary_].c.name}, {"requested", cases_[primary_].c.requested},
                     {"realised", cases_[primary_].c.realised}, {"note", cases_[primary_].c.note}};
  if (g.contains("holdout")) s["holdout"] = g["holdout"];
  if (g.contains("dispatch")) s["dispatch"] = g["dispatch"];  // --dispatch (per_shape_loop.cpp)
  if (st_.roofline.is_object()) s["roofline"] = roofline_summary(st_.roofline);
  s["timeline"] = st_.timeline;
  s["methods"] = methods_json(st_.verdicts);
  util::Json params = util::Json::array();
  for (const auto& p : st_.param_ablations) params.push_back(to_json(p));
  s["param_ablations"] = params;
  s["frontier"] = st_.frontier;
  s["stop"] = {{"reason", std::string(stop_reason_text(st_.stop_reason))}, {"detail", st_.stop_detail}};
  s["phase_seconds"] = st_.phase_seconds;
  s["wall"] = to_json(st_.wall);
  s["candidate_costs"] = candidate_costs(st_.history);
  s["reuse"] = reuse_summary(st_.history, st_.ablations, st_.raced_again);
  if (!st_.warm_start.empty()) s["warm_start"] = warm_start_json(st_);
  if (!st_.strategy_memory.is_null()) s["strategy_memory"] = st_.strategy_memory;
  if (st_.measuring.contains("per_slot")) s["measuring"] = st_.measuring;
  if (auto u = search::llm_usage_summary(dir_); !u.is_null()) s["llm"] = u;
  // Only a champion that was written: a run stopped at a gate has none (and its summary says so).
  if (std::error_code ec; fs::exists(dir_ / "champion" / o_.job.kernel.filename(), ec))
    s["champion_path"] = (dir_ / "champion" / o_.job.kernel.filename()).string();
  s["gates_passed"] = st_.stop_reason != StopReason::kGateFailed;
  if (derived_) {
    s["kernel"] = original_kernel_.string();
    s["derived"] = derived_json();
  }
  s["run_dir"] = dir_.string();
  return s;
}

}  // namespace kopt::loop
