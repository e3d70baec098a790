// The run directory and the four gates: no candidate is generated before hardware, correctness, timing
// stability and the Nsight Compute profile of the baseline all pass.
#include "compile/pool.h"
#include "loop/optimizer.h"
#include "dispatch/gpus.h"
#include "toolchain/tools.h"
#include "pipeline/placement.h"
#include "pipeline/triton.h"
#include "profile/plan.h"
#include "search/annotations.h"
#include "search/builtin_generator.h"
#include "util/fs.h"
#include "util/output.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

std::optional<RunOutcome> Optimizer::check_inputs() {
  auto report = [this](const Error& e) {
    util::note_failure(e.message);
    return outcome(RunEnd::kInputError, e.code, "kopt optimize: " + e.message + "\n");
  };
  if (auto st = pipeline::validate(o_.job); !st) return report(st.error());
  if (auto st = validate_options(o_); !st) return report(st.error());
  // The search space, before anything is written: annotation errors are input errors.
  auto space = [&]() -> Status {
    KOPT_TRY_ASSIGN(source_text_, util::read_file(o_.job.kernel));
    KOPT_TRY_ASSIGN(auto reg, search::registry());
    reg_ = &reg.get();
    KOPT_TRY_ASSIGN(auto ann, search::parse_annotations(source_text_, o_.job.kernel.string()));
    if (ann.empty()) {
      // No annotations: the space kopt derives from the code (docs/ANNOTATIONS.md), searched through a copy.
      auto d = search::derive(source_text_, o_.job.kernel.string());
      auto back = d && !d->empty() ? search::parse_annotations(d->instrumented, o_.job.kernel.string())
                                   : Result<search::Annotations>(search::Annotations{});
      if (!d || !back) {
        say("kopt optimize: no search space could be derived from {} ({}): only the flag methods are searched",
            o_.job.kernel.string(), (!d ? d.error() : back.error()).message);
      } else if (!d->empty()) {
        ann = std::move(back).value();
        source_text_ = d->instrumented;
        derived_ = std::move(d).value();
      }
    }
    search::SpaceOptions so;
    if (pipeline::is_triton_kernel(o_.job.kernel)) so.backend = search::Backend::kTriton;
    so.numerics = o_.job.numerics;
    so.arch = 90;
    KOPT_TRY_ASSIGN(space_, search::build_space(ann, *reg_, so));
    if (!derived_ && !ann.empty())
      if (auto d = search::derive(source_text_, o_.job.kernel.string()); d && !d->params.empty())
        say("kopt optimize: note: kopt annotate derives {} more parameter(s) from the code ({}, ...); not added: the "
            "@kopt lines are the authority",
            d->params.size(), d->params.front().name);
    return ok_status();
  }();
  if (!space) return report(space.error());
  auto jobs = compile::parse_jobs(o_.job.compile_jobs);
  if (!jobs) return report(jobs.error());
  jobs_ = *jobs;  // 0: auto, sized per batch by the pool
  return std::nullopt;
}

std::optional<RunOutcome> Optimizer::check_hardware() {
  {
    Phase p(*this, "gates");
    say("gate 1/4 hardware (kopt doctor)...");
    hw_ = lab_.hardware();
  }
  if (util::interrupted()) return outcome(RunEnd::kInterrupted, ExitCode::kInterrupted, "kopt optimize: interrupted\n");
  if (hw_->passed) return std::nullopt;
  std::string why = "stopped at the hardware gate: missing or broken: " + util::join(hw_->failed_required, ", ");
  util::note_failure(why);
  return outcome(RunEnd::kHardwareGate, ExitCode::kGate,
                 fmt::format("kopt optimize: {} (kopt doctor shows each check)\n  {}\n", why,
                             resuming_ ? "the run directory " + dir_.string() + " stays resumable; continue it where the gate "
                                         "passes with: kopt optimize --resume " + dir_.string()
                                       : std::string("no run directory was made")));
}

std::optional<RunOutcome> Optimizer::open_run_dir() {
  resuming_ = o_.resume.has_value();
  if (resuming_) {
    dir_ = *o_.resume;
    auto j = util::read_json(dir_ / "state.json");
    if (!j) {
      util::note_failure("--resume " + dir_.string() + ": " + j.error().message);
      return outcome(RunEnd::kInputError, ExitCode::kInput,
                     fmt::format("kopt optimize: --resume {}: {}\n", dir_.string(), j.error().message));
    }
    auto s = state_from_json(*j);
    if (!s) {
      util::note_failure(s.error().message);
      return outcome(RunEnd::kInputError, s.error().code, "kopt optimize: " + s.error().message + "\n");
    }
    st_ = *s;
    wall_base_s_ = st_.wall.whole_s;
    if (st_.stop_reason == StopReason::kGateFailed) {
      // Not a finished run: it never measured a candidate, and its gate failure is not undone by resuming.
      std::string why = fmt::format("--resume {}: this run stopped at a gate ({}) and cannot be resumed; fix the cause and "
                                    "start a new run with the same command (its stop.json and summary.md say more)",
                                    dir_.string(), st_.stop_detail.empty() ? "no detail recorded" : st_.stop_detail);
      util::note_failure(why);
      return outcome(RunEnd::kInputError, ExitCode::kInput, "kopt optimize: " + why + "\n");
    }
    if (st_.finished())
      return outcome(RunEnd::kAlreadyFinished, ExitCode::kOk,
                     fmt::format("kopt optimize: {} already finished ({}); see its summary.md\n", dir_.string(),
                                 stop_name(st_.stop_reason)));
    say("kopt optimize: resuming {} after iteration {}", dir_.string(), st_.iterations_done);
    // What the run continues with (--resume may change the iterations, the budget, the GPUs): a later --resume
    // starts from these, not from the first start's.
    if (auto st = write_json(dir_ / "options.json", "options", options_to_json(o_)); !st) return fail(st.error());
  } else {
    auto d = pipeline::make_run_dir(o_.out, "run");
    if (!d) {
      util::note_failure(d.error().message);
      return outcome(RunEnd::kInputError, d.error().code, "kopt optimize: " + d.error().message + "\n");
    }
    dir_ = *d;
    if (auto st = write_json(dir_ / "options.json", "options", options_to_json(o_)); !st) return fail(st.error());
    say("kopt optimize {} [{}] -> {}", o_.job.kernel.string(), format_dims(o_.job.dims), dir_.string());
  }
  // The limits are the options' (a resumed run may have been given new ones).
  st_.stop.max_iterations = o_.iterations;
  st_.stop.patience = patience_for(o_);
  // An explicit --patience is the user's rule for when to stop: the exploration rule is auto's (decisions.h).
  st_.stop.explore_patience = o_.patience > 0 ? 0 : StopState::kExplorePatience;
  st_.stop.time_budget_s = o_.time_budget_s;
  if (derived_)
    if (auto st = use_derived_space(); !st) return fail(st.error());
  return std::nullopt;
}

std::optional<RunOutcome> Optimizer::pass_gates() {
  // ---- Gate 1: hardware ----
  {
    Phase p(*this, "gates");
    HardwareGate hw = hw_ ? std::move(*hw_) : lab_.hardware();
    hw_.reset();
    fs::create_directories(dir_ / "gates");
    util::set_meta_info(hw.meta);  // env.json's own meta block carries the versions it reports
    if (auto st = write_json(dir_ / "env.json", "env", hw.report); !st) return fail(st.error());
    if (auto st = write_json(dir_ / "gates" / "hardware.json", "gate", hw.report); !st) return fail(st.error());
    if (!hw.passed) return stop("hardware", gate_error("missing or broken: " + util::join(hw.failed_required, ", ")), hw.report);
    gpu_ = hw.gpu;
    if (auto rc = choose_slots(hw)) return *rc;
  }
  if (util::interrupted()) return interrupted_exit();

  // ---- Golden data and the baseline build ----
  {
    Phase p(*this, "gates");
    auto prep = lab_.prepare(dir_, resuming_, [this](const std::string& s) { say("  {}", s); });
    if (!prep) return stop("inputs", prep.error(), util::Json::object());
    prep_ = std::move(prep).value();
    if (o_.job.compile_timeout_s <= 0 && !triton()) {
      bool cutlass = pipeline::compile_request(o_.job, "kernel", o_.job.kernel, {}).cutlass;
      o_.job.compile_timeout_s = compile::candidate_compile_limit_s(prep_.build.compile_ms, prep_.build.cache_hit, cutlass);
      say("  candidate compile limit: {:.0f} s (a candidate past it is pruned, not waited on)", o_.job.compile_timeout_s);
    }
    if (prep_.manifest.contains("reference_timing") && prep_.manifest["reference_timing"].is_object())
      st_.reference_ms = prep_.manifest["reference_timing"].value("median_ms", 0.0);
  }
  // ---- The workload matrix: the cases, fitted to the working set, golden data each (issue 18) ----
  {
    Phase p(*this, "gates");
    if (auto rc = prepare_cases()) return *rc;
  }
  {
    Phase p(*this, "ceilings");
    auto c = lab_.ceilings(gpu_);
    if (!c) return stop("hardware", c.error(), {{"step", "device ceilings"}});
    ceilings_ = *c;
    // The speed-of-light floor at the primary case (prep_ holds its golden data): evidence rule, docs/GATES.md.
    if (auto sol = pipeline::speed_of_light(*ceilings_, prep_.manifest, prep_.buffer_dtypes, gpu_.l2_bytes, false); !sol) {
      say("  the speed-of-light floor is not checked: {}", sol.error().message);
    } else if (*sol) {
      sol_ = **sol;
      st_.gate_records["speed_of_light"] = roofline::to_json(*sol_);
    }
    if (auto st = write_json(dir_ / "ceilings.json", "ceilings", roofline::to_json(*ceilings_)); !st) return fail(st.error());
  }
  if (!st_.profile_plan.is_null() && !st_.profile_plan.empty()) {
    if (auto pl = profile::plan_from_json(st_.profile_plan); pl) plan_ = *pl;
  }
  fs::path base_dir = dir_ / "iter_00_baseline";
  fs::create_directories(base_dir);
  base_candidate_ = search::baseline_candidate(*space_, *reg_, o_.job.kernel, source_text_);
  base_candidate_.id = "baseline";

  if (st_.gates_passed) {
    auto j = util::read_json(dir_ / "gates" / "correctness.json");
    if (j) baseline_result_ = *j;
    // The timing method the baseline was timed with: what the results database's lookups name (reuse_loop.cpp).
    for (const char* f : {"timing_retry.json", "timing.json"})
      if (auto t = util::read_json(dir_ / "gates" / f); t && t->is_object()) {
        timing_method_ = t->value("timing_method", t->contains("timing_info") && (*t)["timing_info"].is_object()
                                                       ? (*t)["timing_info"].value("timing_method", std::string())
                                                       : std::string());
        break;
      }
    start_search_clock();
    return std::nullopt;
  }
  Phase p(*this, "gates");
  // ---- Gate 2: correctness on every seed ----
  say("gate 2/4 correctness of the baseline on {} seeds...", o_.job.seeds);
  auto check = run({prep_.build.library}, {nullptr}, dir_ / "gates" / "correctness.json", runner::RunMode::kCheck);
  if (check.status != runner::RunStatus::kOk) {
    // What the sanitizer sees in a baseline that is wrong is often why (a race, an out-of-bounds write): data for the stop.
    sanitize_baseline();
    return stop("correctness", validation_error("the baseline is not correct: " + std::string(runner::status_name(check.status)) + ": " + check.message),
                {{"result", runner::to_json(check)},
                 {"sanitizer", st_.gate_records.contains("baseline_sanitizer") ? st_.gate_records["baseline_sanitizer"] : util::Json(nullptr)}});
  }
  baseline_result_ = check.details;
  sanitize_timeout_s_ = sanitize::sanitize_timeout_s(check.wall_ms);
  if (auto rc = check_baseline_at_cases()) return *rc;
  // ---- Gate 3: timing stability ----
  say("gate 3/4 timing stability...");
  auto timed = run({prep_.build.library}, {nullptr}, dir_ / "gates" / "timing.json", runner::RunMode::kTime);
  util::Json tried = util::Json::array();
  tried.push_back(runner::to_json(timed));
  if (timed.timing && timed.timing->stability == runner::Stability::kUnstable) {
    say("  unstable (robust CV {:.1f}%): retrying with 3x the samples budget", 100 * timed.timing->robust_cv);
    double saved = o_.max_time_s;
    o_.max_time_s = saved * 3;
    timed = run({prep_.build.library}, {nullptr}, dir_ / "gates" / "timing_retry.json", runner::RunMode::kTime);
    o_.max_time_s = saved;
    tried.push_back(runner::to_json(timed));
  }
  if (!timed.timing) return stop("timing", validation_error("the baseline failed while being timed: " + timed.message), tried);
  if (timed.timing->stability == runner::Stability::kUnstable)
    return stop("timing", gate_error(fmt::format("the baseline's timing is unstable: robust CV {:.1f}%, 95% CI ±{:.1f}% of the "
                                                 "median after {} samples. Something else may be using the GPU, or the "
                                                 "kernel is too short (< 10 µs): use larger dims.",
                                                 100 * timed.timing->robust_cv, 100 * timed.timing->ci95_rel_halfwidth, timed.timing->samples)),
                tried);
  if (sol_)
    if (auto v = roofline::below_speed_of_light(*sol_, timed.timing->median_ms))
      return stop("timing",
                  input_error("the baseline's " + *v +
                              ". Either ref.py's workload_model overstates the work, or the kernel does not do it (it "
                              "is wrong where the checks cannot see, or it remembers its outputs)"),
                  tried);
  record_measured(base_candidate_, timed, runner::RunMode::kTime, db::Verdict::kCorrect, "", prep_.build.resources);
  timing_method_ = timed.timing_method;
  // The baseline's SASS: the instruction mix a champion's is compared with (summary.html).
  if (!triton()) {
    if (auto st = write_json(base_dir / "sass.json", "sass", sass_check({prep_.build.library}, base_candidate_)); !st) return fail(st.error());
    // Its build, as a candidate's build.json: ptxas's registers, shared memory and spills in the page's table.
    if (auto st = write_json(base_dir / "build.json", "build", compile::to_json(prep_.build)); !st) return fail(st.error());
  }
  // ---- The sanitizer on the baseline at a small case (findings recorded; race_safe starts from it) ----
  sanitize_baseline();
  // ---- Gate 4: Nsight Compute ----
  say("gate 4/4 Nsight Compute profile of the baseline...");
  auto metrics = profile(prep_.build.library, nullptr, base_dir / "profile", "baseline");
  if (!metrics) return stop("ncu", metrics.error(), {{"plan", profile::to_json(plan_)}});
  st_.metrics = *metrics;
  auto placed = place(*timed.timing, base_dir, "baseline");
  if (!placed) return stop("roofline", placed.error(), util::Json::object());
  st_.stop.workload_model = placed->mode == roofline::Mode::kWorkloadModel;
  st_.stop.near_peak = placed->near_peak();
  ChampionRecord b{base_candidate_, prep_.build.library.string(), timed.timing->median_ms, (dir_ / "gates" / "timing.json").string()};
  st_.baseline = b;
  st_.champion = b;
  st_.wall.champion_s = elapsed_s();
  search::Measurement m;
  m.candidate = base_candidate_;
  m.median_ms = timed.timing->median_ms;
  st_.history.push_back(m);
  st_.timeline.push_back({{"iteration", 0}, {"champion_id", "baseline"}, {"champion_ms", timed.timing->median_ms},
                          {"improved", false}, {"candidates", 1}, {"correct", 1},
                          {"note", fmt::format("gates passed; {}; stability {}", roofline::describe(placed->verdict),
                                               runner::describe(timed.timing->stability))}});
  st_.gates_passed = true;
  st_.last_profile = {{"methods", base_candidate_.methods}, {"median_ms", timed.timing->median_ms}, {"candidate", "baseline"}};
  start_search_clock();
  if (auto st = save_state(); !st) return fail(st.error());
  say("gates passed: baseline {:.4f} ms ({}); roofline: {}", timed.timing->median_ms, runner::describe(timed.timing->stability),
      roofline::describe(placed->verdict));
  return std::nullopt;
}

}  // namespace kopt::loop

namespace kopt::loop {

std::optional<RunOutcome> Optimizer::choose_slots(const HardwareGate& hw) {
  slots_.clear();
  std::vector<runner::WorkerSpec> specs;
  util::Json rec = util::Json::array();
  if (!o_.ray_address.empty()) {
    // A Ray cluster: one bridge per slot, each holding one GPU of the cluster through a Ray actor.
    if (pipeline::is_triton_kernel(o_.job.kernel))
      return stop("hardware", input_error("--ray measures CUDA/CUTLASS libraries through kopt's worker; a Triton kernel is "
                                          "measured by one-shot Python children on this host: drop --ray"), util::Json::object());
    if (o_.gpus.kind != dispatch::GpuSelection::Kind::kCount)
      return stop("hardware", input_error("--ray needs the number of GPU slots to use: --gpus N"), util::Json::object());
    for (int i = 0; i < o_.gpus.count; ++i) {
      auto w = runner::ray_worker_spec(o_.ray_address, i);
      specs.push_back(std::move(w));
      slots_.push_back({fmt::format("Ray slot {}", i)});
      rec.push_back({{"slot", i}, {"name", slots_.back().name}, {"ray_address", o_.ray_address}});
    }
  } else {
    auto chosen = dispatch::resolve_gpus(o_.gpus, hw.gpus.empty() ? std::vector<device::GpuInfo>{hw.gpu} : hw.gpus);
    if (!chosen) return stop("hardware", chosen.error(), hw.report);
    for (const auto& sl : *chosen) {
      runner::WorkerSpec w;
      if (!sl.visible_devices.empty()) w.env["CUDA_VISIBLE_DEVICES"] = sl.visible_devices;
      specs.push_back(std::move(w));
      slots_.push_back({sl.name});
      rec.push_back({{"slot", static_cast<int>(slots_.size()) - 1}, {"name", sl.name}, {"gpu", device::to_json(sl.gpu)},
                     {"cuda_visible_devices", sl.visible_devices}});
    }
    gpu_ = chosen->front().gpu;  // ceilings, the roofline and profiles are the first slot's (one model: any slot's)
  }
  st_.measuring["slots"] = rec;
  // Today's path exactly: one slot on the first GPU in kopt's own environment: the lab keeps its one worker.
  const bool plain = specs.size() == 1 && specs.front().argv.empty() && specs.front().env.empty();
  if (!plain) lab_.use_slots(specs);
  if (!plain) {
    std::string names;
    for (const auto& sl : slots_) {
      if (!names.empty()) names += ", ";
      names += sl.name;
    }
    say("  measuring on {} slot(s): {}", slots_.size(), names);
  }
  return std::nullopt;
}

}  // namespace kopt::loop
