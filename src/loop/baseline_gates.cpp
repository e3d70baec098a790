// Gates 1 to 4 on the baseline, after the run directory is open: the hardware's record and the measuring slots, golden
// data and the baseline build, the workload matrix, the ceilings, then correctness, timing stability and the Nsight
// Compute profile. No candidate is generated before all of them pass.
#include "compile/pool.h"
#include "loop/optimizer.h"
#include "loop/phase.h"
#include "pipeline/placement.h"
#include "pipeline/triton.h"
#include "profile/plan.h"
#include "search/builtin_generator.h"
#include "util/fs.h"
#include "util/output.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

// pass_gates()'s steps, in its order: each gives how the run ends when it stops it.
struct Optimizer::BaselineGates {
  Optimizer& o;
  std::optional<RunOutcome> record_hardware_gate();  // gate 1's record, then the measuring slots
  std::optional<RunOutcome> finish_hardware_gate();  // gate 1's check left to run beside gate 2, waited for and recorded
  std::optional<RunOutcome> prepare_baseline();      // golden data and the baseline build
  std::optional<RunOutcome> measure_ceilings();      // the device's ceilings and the speed-of-light floor
  void resume_passed_gates();                        // the gates passed before --resume: what the run needs of them
  std::optional<RunOutcome> check_primary();         // gate 2's check at the primary case (beside the cases' golden data)
  std::optional<RunOutcome> check_primary_and_sanitize();  // both beside the cases' golden data
  std::optional<RunOutcome> gate_correctness();      // gate 2, at every case
  bool primary_checked = false;
  // The baseline's sanitizer gate, begun before the check at the user's case and recorded after the cases' checks.
  std::future<std::optional<sanitize::Verdict>> sanitizing;
  std::optional<RunOutcome> gate_timing(runner::RunOutcome& timed);  // gate 3 (`timed`: the baseline's timing)
  std::optional<RunOutcome> gate_profile(const runner::RunOutcome& timed, const fs::path& base_dir);  // gate 4
};

std::optional<RunOutcome> Optimizer::pass_gates() {
  BaselineGates g{*this};
  if (auto rc = g.record_hardware_gate()) return *rc;  // gate 1: hardware
  if (util::interrupted()) return interrupted_exit();
  if (auto rc = g.prepare_baseline()) return *rc;
  // ---- The workload matrix: the cases, fitted to the working set, golden data each (issue 18) ----
  // Gate 2's check at the user's case, then the baseline's sanitizer gate, run while the harness makes the others'
  // data (issue 36), unless the gates passed before a --resume.
  {
    Phase p(*this, "gates");
    std::function<std::optional<RunOutcome>()> beside;
    if (!st_.gates_passed) beside = [&g] { return g.check_primary_and_sanitize(); };
    if (auto rc = prepare_cases(beside)) return *rc;
  }
  if (auto rc = g.measure_ceilings()) return *rc;
  if (!st_.profile_plan.is_null() && !st_.profile_plan.empty()) {
    if (auto pl = profile::plan_from_json(st_.profile_plan); pl) plan_ = *pl;
  }
  fs::path base_dir = dir_ / "iter_00_baseline";
  fs::create_directories(base_dir);
  base_candidate_ = search::baseline_candidate(*space_, *reg_, o_.job.kernel, source_text_);
  base_candidate_.id = "baseline";

  if (st_.gates_passed) {
    if (auto rc = g.finish_hardware_gate()) return *rc;
    g.resume_passed_gates();
    return std::nullopt;
  }
  Phase p(*this, "gates");
  if (auto rc = g.gate_correctness()) return *rc;  // gate 2
  if (auto rc = g.finish_hardware_gate()) return *rc;  // gate 1's counters probe, which ran beside gate 2
  runner::RunOutcome timed;
  if (auto rc = g.gate_timing(timed)) return *rc;  // gate 3
  // The baseline's SASS: the instruction mix a champion's is compared with (summary.html).
  if (!triton()) {
    if (auto st = write_json(base_dir / "sass.json", "sass", sass_check({prep_.build.library}, base_candidate_)); !st) return fail(st.error());
    // Its build, as a candidate's build.json: ptxas's registers, shared memory and spills in the page's table.
    if (auto st = write_json(base_dir / "build.json", "build", compile::to_json(prep_.build)); !st) return fail(st.error());
  }
  return g.gate_profile(timed, base_dir);  // gate 4, then the baseline becomes the champion
}

std::optional<RunOutcome> Optimizer::BaselineGates::record_hardware_gate() {
  // ---- Gate 1: hardware ----
  Phase p(o, "gates");
  HardwareGate hw = o.hw_ ? std::move(*o.hw_) : o.lab_.hardware();
  o.hw_.reset();
  fs::create_directories(o.dir_ / "gates");
  util::set_meta_info(hw.meta);  // env.json's own meta block carries the versions it reports
  if (auto st = o.write_json(o.dir_ / "env.json", "env", hw.report); !st) return o.fail(st.error());
  if (auto st = o.write_json(o.dir_ / "gates" / "hardware.json", "gate", hw.report); !st) return o.fail(st.error());
  if (!hw.passed) return o.stop("hardware", gate_error("missing or broken: " + util::join(hw.failed_required, ", ")), hw.report);
  o.gpu_ = hw.gpu;
  return o.choose_slots(hw);
}

std::optional<RunOutcome> Optimizer::BaselineGates::finish_hardware_gate() {
  // The hardware gate's counters probe (SystemLab::hardware) ran beside the baseline's checks, which time nothing;
  // nothing is timed or profiled before it ends. Its check joins the gate's record; a failure stops the run there.
  auto d = o.lab_.deferred_hardware_check();
  if (!d) return std::nullopt;
  Phase p(o, "gates");
  auto written = util::read_json(o.dir_ / "gates" / "hardware.json");
  util::Json report = written && written->is_object() ? *written : util::Json::object();
  report.erase("meta");
  if (!report.contains("checks") || !report["checks"].is_array()) report["checks"] = util::Json::array();
  report["checks"].push_back(d->check);
  if (d->fails_gate) {
    report["passed"] = false;
    if (!report.contains("failed_required") || !report["failed_required"].is_array())
      report["failed_required"] = util::Json::array();
    report["failed_required"].push_back(d->name);
  }
  for (const char* f : {"env.json", "gates/hardware.json"})
    if (auto st = o.write_json(o.dir_ / f, f == std::string("env.json") ? "env" : "gate", report); !st) return o.fail(st.error());
  const std::string summary = d->check.value("summary", std::string());
  if (d->fails_gate)
    return o.stop(
        "hardware",
        gate_error("missing or broken: " + d->name + (summary.empty() ? "" : " (" + summary + ")") +
                   (d->check.value("fix", std::string()).empty() ? "" : "; fix: " + d->check.value("fix", std::string()))),
        report);
  if (!d->check.value("details", util::Json::object()).value("cached", false))
    o.say("  gate 1/4, beside gate 2: {}: {}", d->name, summary);
  return std::nullopt;
}

std::optional<RunOutcome> Optimizer::BaselineGates::prepare_baseline() {
  // ---- Golden data and the baseline build ----
  Phase p(o, "gates");
  auto prep = o.lab_.prepare(o.dir_, o.resuming_, [this](const std::string& s) { o.say("  {}", s); });
  if (!prep) return o.stop("inputs", prep.error(), util::Json::object());
  o.prep_ = std::move(prep).value();
  if (o.o_.job.compile_timeout_s <= 0 && !o.triton()) {
    bool cutlass = pipeline::compile_request(o.o_.job, "kernel", o.o_.job.kernel, {}).cutlass;
    o.o_.job.compile_timeout_s = compile::candidate_compile_limit_s(o.prep_.build.compile_ms, o.prep_.build.cache_hit, cutlass);
    o.say("  candidate compile limit: {:.0f} s (a candidate past it is pruned, not waited on)", o.o_.job.compile_timeout_s);
  }
  if (o.prep_.manifest.contains("reference_timing") && o.prep_.manifest["reference_timing"].is_object())
    o.st_.reference_ms = o.prep_.manifest["reference_timing"].value("median_ms", 0.0);
  return std::nullopt;
}

std::optional<RunOutcome> Optimizer::BaselineGates::measure_ceilings() {
  Phase p(o, "ceilings");
  auto c = o.lab_.ceilings(o.gpu_);
  if (!c) return o.stop("hardware", c.error(), {{"step", "device ceilings"}});
  o.ceilings_ = *c;
  // The speed-of-light floor at the primary case (prep_ holds its golden data): evidence rule, docs/GATES.md.
  if (auto sol = pipeline::speed_of_light(*o.ceilings_, o.prep_.manifest, o.prep_.buffer_dtypes, o.gpu_.l2_bytes, false); !sol) {
    o.say("  the speed-of-light floor is not checked: {}", sol.error().message);
  } else if (*sol) {
    o.sol_ = **sol;
    o.st_.gate_records["speed_of_light"] = roofline::to_json(*o.sol_);
  }
  if (auto st = o.write_json(o.dir_ / "ceilings.json", "ceilings", roofline::to_json(*o.ceilings_)); !st) return o.fail(st.error());
  return std::nullopt;
}

void Optimizer::BaselineGates::resume_passed_gates() {
  auto j = util::read_json(o.dir_ / "gates" / "correctness.json");
  if (j) o.baseline_result_ = *j;
  // The timing method the baseline was timed with: what the results database's lookups name (reuse_loop.cpp).
  for (const char* f : {"timing_retry.json", "timing.json"})
    if (auto t = util::read_json(o.dir_ / "gates" / f); t && t->is_object()) {
      o.timing_method_ = t->value("timing_method", t->contains("timing_info") && (*t)["timing_info"].is_object()
                                                     ? (*t)["timing_info"].value("timing_method", std::string())
                                                     : std::string());
      break;
    }
  o.start_search_clock();
}

std::optional<RunOutcome> Optimizer::BaselineGates::check_primary() {
  // ---- Gate 2: correctness on every seed, at the primary case ----
  o.say("gate 2/4 correctness of the baseline on {} seeds...", o.o_.job.seeds);
  auto check = o.run({o.prep_.build.library}, {nullptr}, o.dir_ / "gates" / "correctness.json", runner::RunMode::kCheck);
  primary_checked = true;
  // The installed modules the baseline's kernel import loaded: the next children find them imported (issue 35).
  if (o.triton()) o.triton_preload_ = pipeline::keep_triton_preload(check.details, util::kopt_cache_dir("triton_preload"));
  if (check.status != runner::RunStatus::kOk) {
    // What the sanitizer sees in a baseline that is wrong is often why (a race, an out-of-bounds write): data for the stop.
    if (sanitizing.valid())
      o.record_baseline_sanitizer(std::move(sanitizing));
    else
      o.sanitize_baseline();
    return o.stop("correctness", validation_error("the baseline is not correct: " + std::string(runner::status_name(check.status)) + ": " + check.message),
                {{"result", runner::to_json(check)},
                 {"sanitizer", o.st_.gate_records.contains("baseline_sanitizer") ? o.st_.gate_records["baseline_sanitizer"] : util::Json(nullptr)}});
  }
  o.baseline_result_ = check.details;
  o.sanitize_timeout_s_ = sanitize::sanitize_timeout_s(check.wall_ms);
  return std::nullopt;
}

std::optional<RunOutcome> Optimizer::BaselineGates::check_primary_and_sanitize() {
  // The sanitizer's tools are one-shot children (compute-sanitizer, then the shared-memory fill run), not the worker:
  // begun first, they run beside the check at the user's case, the harness making the cases' data and the cases'
  // checks, none of which times anything; the timing gate after waits for all of them (issue 36). Its golden data
  // (the small case) was made first (prepare_cases). Measured before, in turn after the check: 2.5-3.3 s of the gates
  // (H100, vector_add 2^24, sgemm 4096^3, s34 call 1).
  sanitizing = o.start_baseline_sanitizer();
  return check_primary();
}

std::optional<RunOutcome> Optimizer::BaselineGates::gate_correctness() {
  // ---- Gate 2: correctness on every seed, at every case ----
  if (!sanitizing.valid()) sanitizing = o.start_baseline_sanitizer();  // not begun beside the cases' golden data
  if (!primary_checked)
    if (auto rc = check_primary()) return *rc;
  auto rc = o.check_baseline_at_cases();
  o.record_baseline_sanitizer(std::move(sanitizing));
  return rc;
}

std::optional<RunOutcome> Optimizer::BaselineGates::gate_timing(runner::RunOutcome& timed) {
  // ---- Gate 3: timing stability ----
  o.say("gate 3/4 timing stability...");
  timed = o.run({o.prep_.build.library}, {nullptr}, o.dir_ / "gates" / "timing.json", runner::RunMode::kTime);
  util::Json tried = util::Json::array();
  tried.push_back(runner::to_json(timed));
  if (timed.timing && timed.timing->stability == runner::Stability::kUnstable) {
    o.say("  unstable (robust CV {:.1f}%): retrying with 3x the samples budget", 100 * timed.timing->robust_cv);
    double saved = o.o_.max_time_s;
    o.o_.max_time_s = saved * 3;
    timed = o.run({o.prep_.build.library}, {nullptr}, o.dir_ / "gates" / "timing_retry.json", runner::RunMode::kTime);
    o.o_.max_time_s = saved;
    tried.push_back(runner::to_json(timed));
  }
  if (!timed.timing) return o.stop("timing", validation_error("the baseline failed while being timed: " + timed.message), tried);
  if (timed.timing->stability == runner::Stability::kUnstable)
    return o.stop("timing", gate_error(fmt::format("the baseline's timing is unstable: robust CV {:.1f}%, 95% CI ±{:.1f}% of the "
                                                 "median after {} samples. Something else may be using the GPU, or the "
                                                 "kernel is too short (< 10 µs): use larger dims.",
                                                 100 * timed.timing->robust_cv, 100 * timed.timing->ci95_rel_halfwidth, timed.timing->samples)),
                tried);
  if (o.sol_)
    if (auto v = roofline::below_speed_of_light(*o.sol_, timed.timing->median_ms))
      return o.stop("timing",
                  input_error("the baseline's " + *v +
                              ". Either ref.py's workload_model overstates the work, or the kernel does not do it (it "
                              "is wrong where the checks cannot see, or it remembers its outputs)"),
                  tried);
  o.record_measured(o.base_candidate_, timed, runner::RunMode::kTime, db::Verdict::kCorrect, "", o.prep_.build.resources);
  o.timing_method_ = timed.timing_method;
  return std::nullopt;
}

std::optional<RunOutcome> Optimizer::BaselineGates::gate_profile(const runner::RunOutcome& timed, const fs::path& base_dir) {
  // ---- Gate 4: Nsight Compute ----
  // A baseline with a workload model is placed on the roofline from its timing; its profile waits until the search
  // needs new evidence (close_iteration); the final champion's profile, taken when the search ends, is Nsight
  // Compute's gate then. With kAfter the baseline is also profiled after the search, for the page
  // (profile_deferred_baseline).
  const bool model = o.prep_.manifest.contains("workload_model") && o.prep_.manifest["workload_model"].is_object();
  const BaselineProfile bp = o.o_.gates.baseline_profile;
  if (bp != BaselineProfile::kGate && model) {
    const bool after = bp == BaselineProfile::kAfter;
    o.say(
        "gate 4/4 Nsight Compute: the workload model places the baseline now; Nsight Compute profiles the champion "
        "when the search needs it and when it ends{}",
        after ? ", and the baseline after the search (--baseline-profile gate profiles it before any candidate)"
              : " (--baseline-profile after also profiles the baseline after the search; gate, before any candidate)");
    o.st_.gate_records["baseline_profile_deferred"] = {{"taken", false}, {"after_search", after}};
  } else {
    o.say("gate 4/4 Nsight Compute profile of the baseline...");
    auto metrics = o.profile(o.prep_.build.library, nullptr, base_dir / "profile", "baseline");
    if (!metrics) return o.stop("ncu", metrics.error(), {{"plan", profile::to_json(o.plan_)}});
    o.st_.metrics = *metrics;
    o.st_.last_profile = {{"methods", o.base_candidate_.methods}, {"median_ms", timed.timing->median_ms}, {"candidate", "baseline"}};
  }
  auto placed = o.place(*timed.timing, base_dir, "baseline");
  if (!placed) return o.stop("roofline", placed.error(), util::Json::object());
  o.st_.stop.workload_model = placed->mode == roofline::Mode::kWorkloadModel;
  o.st_.stop.near_peak = placed->near_peak();
  o.st_.stop.at_roof = placed->at_roof();
  ChampionRecord b{o.base_candidate_, o.prep_.build.library.string(), timed.timing->median_ms, (o.dir_ / "gates" / "timing.json").string()};
  o.st_.baseline = b;
  o.st_.champion = b;
  o.st_.wall.champion_s = o.elapsed_s();
  o.st_.wall.gates_s = o.st_.wall.champion_s;
  search::Measurement m;
  m.candidate = o.base_candidate_;
  m.median_ms = timed.timing->median_ms;
  o.st_.history.push_back(m);
  o.st_.timeline.push_back({{"iteration", 0}, {"champion_id", "baseline"}, {"champion_ms", timed.timing->median_ms},
                          {"improved", false}, {"candidates", 1}, {"correct", 1},
                          {"note", fmt::format("gates passed; {}; stability {}", roofline::describe(placed->verdict),
                                               runner::describe(timed.timing->stability))}});
  o.st_.gates_passed = true;
  o.start_search_clock();
  if (auto st = o.save_state(); !st) return o.fail(st.error());
  o.say("gates passed: baseline {:.4f} ms ({}); roofline: {}", timed.timing->median_ms, runner::describe(timed.timing->stability),
      roofline::describe(placed->verdict));
  return std::nullopt;
}

}  // namespace kopt::loop
