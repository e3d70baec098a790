#include <fmt/format.h>

#include <cstdio>
#include <map>

#include "cli/commands.h"
#include "cli/db_options.h"
#include "cli/fail.h"
#include "cli/kernel_options.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "db/store.h"
#include "device/gpu_cache.h"
#include "device/gpu_info.h"
#include "doctor/doctor.h"
#include "pipeline/db_record.h"
#include "pipeline/placement.h"
#include "pipeline/prepare.h"
#include "pipeline/triton.h"
#include "roofline/measure.h"
#include "runner/launch.h"
#include "runner/sealed.h"
#include "runner/timing_method.h"
#include "runner/warm.h"
#include "util/fs.h"
#include "util/laps.h"
#include "util/output.h"
#include "util/progress.h"

namespace kopt::cli {

namespace {

// Faster than the reference by more than this is flagged (KernelBench's factor): said, not trusted blindly.
constexpr double kFlagFactor = 10;

// The measurement into the results database (docs/DATABASE.md); a failure is a warning, never the command's.
void record_in_db(const pipeline::KernelJob& job, const pipeline::Prepared& prep, const runner::RunOutcome& out,
                  const std::string& l2, const std::filesystem::path& run_dir, const std::vector<std::string>& rejection,
                  bool no_db, const std::string& db_path) {
  auto warn = [](const std::string& m) { std::fprintf(stderr, "kopt bench: warning: the results database: %s\n", m.c_str()); };
  auto store = db::open_for_recording(no_db, db_path);
  if (!store) return warn(store.error().message);
  if (!*store) return;
  auto text = util::read_file(job.kernel);
  if (!text) return warn(text.error().message);
  auto ctx = pipeline::record_context(job, prep, *text, util::meta_info(), db::Source::kBench, run_dir);
  ctx.l2_mode = l2;
  db::Verdict verdict = pipeline::verdict_of(out.status);
  std::string note = out.message;
  if (verdict == db::Verdict::kCorrect && !rejection.empty()) {
    verdict = db::Verdict::kIncorrect;
    note = rejection[0] + ": " + rejection[1];
  }
  auto rec = pipeline::make_record(ctx, nullptr, out, runner::RunMode::kTime, verdict, note, prep.build.resources);
  if (auto st = (*store)->record(rec); !st) warn(st.error().message);
}

std::string fmt_rate(double per_s, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (per_s >= 1000 && i < 5) {
    per_s /= 1000;
    ++i;
  }
  return fmt::format("{:.2f} {}{}", per_s, prefixes[i], unit);
}

// The measurement: on the warm bench worker (runner/warm.h), or in a fresh child with --no-worker or
// KOPT_BENCH_WORKER=off; `warm_info` says which (bench.json's "warm_worker").
runner::RunOutcome measure(const runner::RunRequest& req, bool no_worker, util::CommandRunner& sys, util::Json& warm_info) {
  if (no_worker || runner::warm_worker_off_by_env()) {
    warm_info = {{"used", false}, {"reason", no_worker ? "--no-worker" : "KOPT_BENCH_WORKER=off"}};
    return runner::run_candidate(req, sys);
  }
  auto warm = runner::run_warm(req, sys, runner::warm_config_from_env());
  warm_info = std::move(warm.info);
  return std::move(warm.outcome);
}

// The ephemeral seed (docs/GATES.md "The ephemeral seed"): where this call made its golden data, the harness that
// made it made one more seed, never written to any file; the kernel, correct on every other seed, is checked once more
// on it in a one-shot child whose judge reads its memfd. Wrong there: `out` becomes wrong_on_ephemeral_seed. Returns
// bench.json's "ephemeral_seed".
util::Json check_ephemeral(const pipeline::Prepared& prep, runner::RunRequest req, util::CommandRunner& sys,
                           runner::RunOutcome& out) {
  if (!prep.ephemeral) return {{"checked", false}, {"reason", prep.ephemeral_reason}};
  if (!runner::is_correct(out.status)) return {{"checked", false}, {"reason", "the kernel failed before it"}};
  req.mode = runner::RunMode::kCheck;
  req.result_json = req.result_json.parent_path() / "ephemeral_check.json";
  req.ephemeral_fd = prep.ephemeral->fd();
  const runner::RunOutcome r = runner::run_candidate(req, sys);
  util::Json j = {
      {"checked", true}, {"seed", prep.ephemeral->to_json()}, {"status", runner::status_name(r.status)}, {"message", r.message}};
  if (r.status == runner::RunStatus::kLoadError || r.status == runner::RunStatus::kInternal ||
      r.status == runner::RunStatus::kInterrupted) {
    j["checked"] = false;
    j["reason"] = r.message;
  } else if (const std::string unjudged = runner::ephemeral_seed_unjudged(r.details);
             r.status == runner::RunStatus::kOk && !unjudged.empty()) {
    j["checked"] = false;  // its judge did not take the seed: no verdict there
    j["reason"] = unjudged;
  } else if (!runner::is_correct(r.status)) {
    out.status = r.status;
    out.message = r.message;
  }
  return j;
}

// bench's "worker" line: which process measured, and what it kept (docs/RUNNER.md "The warm bench worker").
std::string describe_worker(const util::Json& w) {
  if (!w.value("used", false)) return "a fresh child (" + w.value("reason", std::string("?")) + ")";
  return fmt::format("the warm bench worker, {} (pid {}, {:.0f} s old, {} request(s) served; measuring process {})",
                     w.value("reused", false) ? "reused" : "started now", w.value("pid", 0), w.value("server_age_s", 0.0),
                     w.value("requests_served", 0), w.value("measuring_process_reused", false) ? "kept" : "new");
}

}  // namespace

int cmd_bench(const Args& args) {
  // Whole wall as the caller waits for it (bench.json phase_seconds, wall_s; issue 36): from here, after the process start.
  std::map<std::string, double> phases;
  util::Laps lap(phases);
  CLI::App app{"kopt bench: check a kernel's correctness on every seed and time it (and the reference)", "kopt bench"};
  pipeline::KernelJob job;
  KernelOptionValues v;
  std::string json_path;
  const runner::RunRequest defaults;
  double max_time_s = defaults.max_time_s;
  bool no_ref_timing = false;
  std::string l2(runner::l2_name(defaults.l2)), db_path;
  bool no_db = false;
  add_kernel_options(app, job, v);
  add_db_record_options(app, db_path, no_db);
  add_json_option(app, json_path, "the results");
  app.add_option("--measure-budget-s", max_time_s, fmt::format("seconds of timing per kernel (default {})", max_time_s));
  add_deprecated_alias(app, "--max-time-s", "--measure-budget-s", max_time_s);
  app.add_flag("--no-reference-timing", no_ref_timing, "do not time ref.py");
  bool quiet = false;
  app.add_flag("--quiet", quiet, "no progress output (the report is still printed)");
  bool no_worker = false;
  app.add_flag("--no-worker", no_worker,
               "measure in a fresh child instead of the warm bench worker kept between calls (also KOPT_BENCH_WORKER=off; "
               "docs/RUNNER.md)");
  app.add_option("--l2", l2,
                 fmt::format("cold: flush the L2 before every sample; warm: keep what the last call left (default {})", l2))
      ->check(CLI::IsMember(
                  {std::string(runner::l2_name(runner::L2Mode::kCold)), std::string(runner::l2_name(runner::L2Mode::kWarm))})
                  .description(""))  // the choices show as the type, not "TEXT:{cold,warm}"
      ->type_name("cold|warm");
  Dims dims;
  if (auto rc = parse_args_with_dims(app, args, dims, v.kernel); rc) return *rc;
  auto fail = [](const Error& e) { return report_failure("bench", e); };
  if (auto st = finish_kernel_job(job, v, dims); !st) return fail(st.error());
  if (auto st = check_db_record_options(db_path, no_db); !st) return fail(st.error());
  util::set_progress_quiet(quiet);
  if (max_time_s <= 0) return fail(input_error("--measure-budget-s must be positive"));
  lap("start");  // the options
  if (auto st = check_contract_first("bench", job); !st) return fail(st.error());
  lap("contract_check");  // ref.py imported by the harness, unless its golden data is cached
  bool gpus_cached = false;
  auto gpus = device::query_gpus_cached(&gpus_cached);  // device/gpu_cache.h: the driver asked once per boot and driver
  if (!gpus) return fail(gate_error("needs a GPU: " + gpus.error().message));
  lap("gpu_query");
  util::set_meta_info(doctor::probe_meta(gpus->gpus[0].name, gpus->driver_version_text()));
  lap("tool_versions");
  auto dir = pipeline::make_run_dir(v.out, "bench");
  if (!dir) return fail(dir.error());
  auto say = [quiet](const std::string& s) {
    if (!quiet) std::fprintf(stderr, "  %s\n", s.c_str());
  };
  if (!quiet)
    std::fprintf(stderr, "kopt bench %s (%s) on %s -> %s\n", job.kernel.c_str(), format_dims(dims).c_str(),
                 gpus->gpus[0].name.c_str(), dir->c_str());
  util::SystemRunner sys;
  lap("start");  // the run directory
  auto prep = pipeline::prepare(job, *dir, sys, !no_ref_timing, say, true);
  if (!prep) return fail(prep.error());
  lap("contract");  // prepare's whole; its compile and golden data moved to their own rows below
  for (const auto& [k, s] : prep->phase_seconds) {
    phases[k] += s;
    phases["contract"] -= s;
  }
  auto req = pipeline::timing_request(job, *prep, *dir / "result.json", max_time_s);
  req.l2 = runner::parse_l2(l2).value();  // --l2 admits only these names
  runner::RunOutcome out;
  util::Json warm_info;
  {
    util::Progress progress(fmt::format("  measuring: {} seed(s) checked, then timed (budget {:g} s)", job.seeds, max_time_s));
    out = measure(req, no_worker, sys, warm_info);
  }
  const util::Json ephemeral = check_ephemeral(*prep, req, sys, out);
  lap("measure");

  const auto& m = prep->manifest;
  std::string report = fmt::format("\nkopt bench: {}  [{}]  on {}\n", job.kernel.string(), format_dims(dims), gpus->gpus[0].name);
  report += fmt::format("contract  {}\n", prep->signature.normalised);
  report += fmt::format("golden    {} seeds; tolerance atol={:g} rtol={:g} ({}; numerics mode {})\n",
                        m.value("seeds", util::Json::array()).size(), prep->tol.atol, prep->tol.rtol, prep->tol_source,
                        search::numerics_mode_name(job.numerics));
  if (prep->sizes_guessed) report += "WARNING   buffer sizes were guessed (ref.py has no setup() or shapes)\n";
  report += "\ncorrectness\n";
  report += fmt::format("  {:<6} {:<10} {:<18} {:>10} {:>10} {:>10}\n", "seed", "output", "status", "max_abs", "max_rel", "rel_l2");
  if (out.details.contains("seeds"))
    for (const auto& s : out.details["seeds"])
      for (auto it = s["outputs"].begin(); it != s["outputs"].end(); ++it) {
        const auto& c = it.value();
        auto num = [&](const char* k) { return c[k].is_number() ? fmt::format("{:.3g}", c[k].get<double>()) : c[k].dump(); };
        report += fmt::format("  {:<6} {:<10} {:<18} {:>10} {:>10} {:>10}\n",
                              s.value("sealed", false) ? std::string("sealed") : std::to_string(s.value("seed", 0)), it.key(),
                              c.value("ok", false) ? (c.value("bitwise_equal", false) ? "ok (bitwise)" : "ok") : "MISMATCH",
                              num("max_abs_err"), num("max_rel_err"), num("rel_l2_err"));
      }
  report += fmt::format("  => {}{}\n", runner::status_name(out.status), out.message.empty() ? "" : ": " + out.message);
  std::vector<std::string> rejection;  // {rule, message}: an evidence rule the parent applies (the floor)
  std::vector<std::string> flags;
  util::Json result = {{"kernel", job.kernel.string()}, {"dims", dims}, {"gpu", gpus->gpus[0].name},
                       {"signature", contract::to_json(prep->signature)}, {"tolerance", {{"atol", prep->tol.atol}, {"rtol", prep->tol.rtol}, {"source", prep->tol_source}}},
                       {"sizes_guessed", prep->sizes_guessed}, {"outcome", runner::to_json(out)}, {"run_dir", dir->string()}};
  if (out.timing) {
    const auto& t = *out.timing;
    const std::string method = out.timing_method.empty() ? "?" : out.timing_method;
    const util::Json& info = out.details.contains("timing_info") ? out.details["timing_info"] : util::Json();
    // On the kernel clock the launch is outside gpu_ms whatever the method: only GPU timestamps are read.
    const bool kernel_clock = info.is_object() && info.value("gpu_clock", std::string()) == "cupti_activity";
    const bool launch_free =
        kernel_clock || (runner::parse_method(method) && runner::excludes_launch(*runner::parse_method(method)));
    report += fmt::format("\ntiming ({} L2; {}: kernel = gpu_ms, {}; call = call_ms, as an application calling solve() sees it)\n",
                          l2, method, launch_free ? "launch excluded" : "host launch included (fallback)");
    report += fmt::format("  kernel     median {:.4f} ms  95% CI [{:.4f}, {:.4f}]  p10 {:.4f}  p90 {:.4f}  min {:.4f}  robust CV {:.2f}%  n={}  {}\n",
                          t.median_ms, t.ci95_low_ms, t.ci95_high_ms, t.p10_ms, t.p90_ms, t.min_ms, 100 * t.robust_cv,
                          t.samples, runner::describe(t.stability));
    if (out.call)
      report += fmt::format("  call       median {:.4f} ms  p10 {:.4f}  p90 {:.4f}  n={}  (host clock: launch, GPU work, synchronisation)\n",
                            out.call->median_ms, out.call->p10_ms, out.call->p90_ms, out.call->samples);
    const util::Json& ti = out.details.contains("timing_info") ? out.details["timing_info"] : util::Json();
    if (ti.is_object() && !ti.value("fallback_reason_text", std::string()).empty())
      report += fmt::format("  method     {}\n", ti["fallback_reason_text"].get<std::string>());
    if (ti.is_object() && ti.contains("gpu_clock")) {
      const std::string clock = ti["gpu_clock"].get<std::string>();
      const double event_ms = ti.value("event_median_ms", 0.0);
      if (clock == "cupti_activity")
        report += fmt::format("  clock      {}: span of solve()'s GPU work ({} records per call, busy {:.4f} ms); "
                              "events median {:.4f} ms\n",
                              clock, ti.value("kernels_per_call", 0.0), ti.value("busy_median_ms", 0.0), event_ms);
      else
        report += fmt::format("  clock      events ({})\n", ti.value("gpu_clock_off_reason_text", std::string()));
      result["gpu_clock"] = clock;
      result["event_ms"] = event_ms;
    }
    result["gpu_ms"] = t.median_ms;
    if (out.call) result["call_ms"] = out.call->median_ms;
    result["timing_method"] = method;
    result["l2"] = l2;
    const auto& rt = m.contains("reference_timing") ? m["reference_timing"] : util::Json();
    if (rt.is_object() && rt.contains("median_ms")) {
      double ref_ms = rt["median_ms"].get<double>();
      report += fmt::format("  reference  median {:.4f} ms  (ref.py on {}; n={})\n", ref_ms, rt.value("device", std::string("?")),
                            rt.value("samples", 0));
      report += fmt::format("  speedup vs reference: {:.2f}x\n", ref_ms / t.median_ms);
      result["speedup_vs_reference"] = ref_ms / t.median_ms;
    }
    const auto& wm = m.contains("workload_model") ? m["workload_model"] : util::Json();
    if (wm.is_object()) {
      double flops = 0;
      if (wm.contains("flops") && wm["flops"].is_number()) flops = wm["flops"].get<double>();
      else if (wm.contains("flops") && wm["flops"].is_object())
        for (auto it = wm["flops"].begin(); it != wm["flops"].end(); ++it) flops += it.value().get<double>();
      double bytes = wm.value("bytes_min", 0.0);
      double s = t.median_ms / 1e3;
      report += fmt::format("  achieved   {} ({} FLOP in the model), {} (bytes_min {:.3g} B)\n", fmt_rate(flops / s, "FLOP/s"),
                            fmt::format("{:.3g}", flops), fmt_rate(bytes / s, "B/s"), bytes);
      result["achieved"] = {{"flop_per_s", flops / s}, {"bytes_per_s", bytes / s}};
    }
    // Evidence rules (docs/GATES.md "Evidence that cannot be gamed"): what the runner found and undid, and the
    // speed-of-light floor of the workload model on this GPU's measured ceilings.
    const util::Json& fresh = ti.is_object() && ti.contains("fresh_inputs") ? ti["fresh_inputs"] : util::Json();
    if (fresh.is_object())
      report += fmt::format("  inputs     {}\n", fresh.value("enabled", false)
                                                   ? fmt::format("fresh content every timed call ({} refreshes), {} "
                                                                 "audit(s) checked, {} on the sealed seed{}",
                                                                 fresh.value("refreshes", 0), fresh.value("audits", 0),
                                                                 fresh.value("sealed_audits", 0),
                                                                 fresh.value("audit_seed_sealed", false)
                                                                     ? std::string()
                                                                     : " (the sealed seed not checked)")
                                                   : std::string("the first seed's, every call (KOPT_FRESH_INPUTS=0)"));
    if (ti.is_object() && ti.contains("device_state") && ti["device_state"].value("changed_by_candidate", false)) {
      report += "  FLAGGED    the kernel changed the persisting-L2 limit or the default stream's access-policy window; "
                "kopt set them back and reset the L2's persisting lines before every sample\n";
      flags.push_back("device_state_changed");
    }
    if (wm.is_object()) {
      roofline::CeilingsOptions copts;
      copts.cuda_driver_fallback = util::meta_info().driver;
      copts.prebuilt_dir = roofline::default_prebuilt_probe_dir();
      auto ceilings = roofline::get_ceilings(gpus->gpus[0], false, copts);
      auto sol = ceilings ? pipeline::speed_of_light(*ceilings, m, prep->buffer_dtypes, gpus->gpus[0].l2_bytes, l2 == "warm")
                          : Result<std::optional<roofline::SpeedOfLight>>(ceilings.error());
      if (!sol) {
        report += fmt::format("  floor      not checked: {}\n", sol.error().message);
      } else if (*sol) {
        result["speed_of_light"] = roofline::to_json(**sol);
        report += fmt::format("  floor      speed of light {:.4f} ms ({})\n", (*sol)->floor_ms,
                              (*sol)->binding_compute() ? (*sol)->compute_roof : (*sol)->memory_roof);
        if (auto why = roofline::below_speed_of_light(**sol, t.median_ms)) rejection = {"below_speed_of_light", *why};
      }
    }
    if (rejection.empty() && result.contains("speedup_vs_reference") &&
        result["speedup_vs_reference"].get<double>() > kFlagFactor) {
      report += fmt::format("  FLAGGED    {:.1f}x faster than the reference (more than {:g}x): timed on fresh inputs with "
                            "audits, as every kernel is; read the figure with care\n",
                            result["speedup_vs_reference"].get<double>(), kFlagFactor);
      flags.push_back("far_faster_than_reference");
    }
  }
  // The answer key (docs/GATES.md "The sealed seed"): out of the kernel's reach, or flagged with the reason.
  if (const util::Json& key = out.details.contains("answer_key") ? out.details["answer_key"] : util::Json(); key.is_object()) {
    result["answer_key"] = key;
    if (key.value("out_of_reach", false))
      report += fmt::format("  answer key out of the kernel's reach: the sealed seed judged in another process (Landlock ABI {})\n",
                            key["landlock"].value("landlock_abi", 0));
    else {
      report += fmt::format("  FLAGGED    the answer key was within the kernel's reach: {}\n", key.value("reason", std::string("?")));
      flags.push_back("answer_key_within_reach");
    }
  }
  if (ephemeral.value("checked", false))
    report += fmt::format("  ephemeral seed (made by this call's harness, never written to any file): {}\n",
                          ephemeral.value("status", std::string()));
  else
    report += fmt::format("  ephemeral seed not checked: {}\n", ephemeral.value("reason", std::string()));
  result["ephemeral_seed"] = ephemeral;
  if (!rejection.empty()) {
    report += fmt::format("\nREJECTED  {}: {}\n          Either the kernel does not do the work (it is wrong, or it "
                          "remembers its outputs) or ref.py's workload_model overstates it.\n",
                          rejection[0], rejection[1]);
    result["rejected"] = {{"rule", rejection[0]}, {"message", rejection[1]}};
  }
  result["flags"] = flags;
  lap("report");  // the ceilings (cached per GPU) and the floor included
  const double wall_s = lap.total_s();
  result["phase_seconds"] = phases;
  result["wall_s"] = wall_s;
  result["warm_worker"] = warm_info;
  result["gpu_info_cached"] = gpus_cached;
  if (out.details.contains("phases_ms")) result["measure_phases_ms"] = out.details["phases_ms"];
  if (out.details.contains("startup_ms")) result["measure_startup_ms"] = out.details["startup_ms"];
  // Where the measuring process's request went beyond its phases (runner/child.cpp): the child made, run, released;
  // in a worker also the golden data found and the store trimmed. measure_wall_ms: the launch or relay as a whole.
  if (out.details.contains("request_ms")) result["measure_request_ms"] = out.details["request_ms"];
  if (out.details.contains("worker_ms")) result["measure_worker_ms"] = out.details["worker_ms"];
  result["measure_wall_ms"] = out.wall_ms;
  {
    std::string parts;
    for (const auto& [k, s] : phases) parts += fmt::format("{}{} {:.2f}", parts.empty() ? "" : ", ", k, s);
    report += fmt::format("\nwall      {:.2f} s ({}; the measuring child {:.2f} s of it)\n", wall_s, parts, out.wall_ms / 1e3);
    report += "worker    " + describe_worker(warm_info) + "\n";
  }
  std::fputs(report.c_str(), util::report_stream(json_path));
  if (auto st = util::write_json_output(json_path, "bench", result); !st)
    std::fprintf(stderr, "kopt bench: %s\n", st.error().message.c_str());
  // The run directory's copy: the result is already printed, so a failed write is said, not fatal.
  if (auto st = util::write_json_atomic(*dir / "bench.json", "bench", result); !st)
    std::fprintf(stderr, "kopt bench: warning: the run directory's bench.json was not written: %s\n", st.error().message.c_str());
  if (out.status == runner::RunStatus::kInterrupted) return to_int(ExitCode::kInterrupted);
  record_in_db(job, *prep, out, l2, *dir, rejection, no_db, db_path);
  return runner::is_correct(out.status) && rejection.empty() ? 0 : to_int(ExitCode::kValidation);
}

}  // namespace kopt::cli
