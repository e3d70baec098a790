#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "cli/commands.h"
#include "cli/db_options.h"
#include "cli/fail.h"
#include "cli/kernel_options.h"
#include "cli/llm_options.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "cli/run_outcome.h"
#include "loop/optimize.h"
#include "report/summary.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/output.h"

namespace kopt::cli {

namespace {

int fail(const Error& e) { return report_failure("optimize", e); }

struct GateOptionValues {
  std::string workload_matrix = "default", sanitize = "auto", shapes, holdout_shapes;
  std::string champion_gates{loop::champion_gates_name(loop::GateOptions{}.champion_gates)};
  std::string baseline_profile{loop::baseline_profile_name(loop::GateOptions{}.baseline_profile)};
};

// Issue 18's options (loop/gate_options.h); the strings become enums in finish_gate_options.
void add_gate_options(CLI::App& app, loop::GateOptions& g, GateOptionValues& v) {
  app.add_option("--workload-matrix", v.workload_matrix,
                 "default: check and time every candidate at the dims x0.5, x0.75 and x1 (weights 0.2/0.3/0.5) on the "
                 "three largest dims; off: at the dims alone (default: default)");
  app.add_option("--shapes", v.shapes, "a file of cases instead of the matrix: one 'NAME=VALUE ... [weight=W]' line per "
                                       "case, # comments");
  app.add_option("--holdout-shapes", v.holdout_shapes, "shapes checked and timed after the search only, same format "
                                                       "(default: awkward ones derived from the dims)");
  app.add_flag("--no-regressions", g.no_regressions, "reject a finalist slower than the champion beyond the noise at any case");
  app.add_flag("--dispatch", g.dispatch,
               "after the search, a per-shape dispatch (CUDA/CUTLASS): the best configuration "
               "per case where it beats the champion beyond the noise, as champion/dispatch/, "
               "checked at every case and held-out shape and timed against the champion");
  app.add_option("--max-working-set-mb", g.max_working_set_mb,
                 "largest working set (MiB of buffers) of a case; larger ones are scaled down (default: 1/16 of the "
                 "GPU's memory)");
  app.add_option("--sanitize", v.sanitize, "compute-sanitizer gate: finalists (the baseline and each finalist), all, "
                                           "or off (default auto: finalists for CUDA and CUTLASS, off for Triton)");
  app.add_option("--champion-gates", v.champion_gates,
                 "when a would-be champion gets the determinism check and the sanitizer: final (the champion the search "
                 "ends with; a rejected one falls back to the champion it replaced, the fastest others raced against it "
                 "again) or each (every finalist before it may become champion) (default: " + v.champion_gates +
                     "; docs/GATES.md)");
  app.add_option("--baseline-profile", v.baseline_profile,
                 "when the baseline's Nsight Compute profile is taken: when-needed (a baseline with a workload model is "
                 "placed on the roofline from its timing, and profiled only when an iteration brings no faster champion "
                 "while it is still the champion; the final champion is profiled at the end), after (the same, and the "
                 "baseline after the search too, for the page's baseline column: 10-16 s more) or gate (before any "
                 "candidate) (default: " +
                     v.baseline_profile + "; docs/GATES.md)");
}

Status finish_gate_options(loop::GateOptions& g, const GateOptionValues& v, const Dims& dims, bool triton) {
  auto m = workload::parse_matrix_mode(v.workload_matrix);
  if (!m) return input_error("--workload-matrix must be default or off, not '" + v.workload_matrix + "'");
  g.workload_matrix = *m;
  // auto: off for Triton. compute-sanitizer around Python, torch and Triton's JIT did not finish the baseline's four
  // tools within 100 s on the H200 (2026-12-01, docs/history/PERFORMANCE-2026-11-30-to-2026-12-02.md section 8), a cost no default should carry;
  // --sanitize finalists asks for it.
  auto s = v.sanitize == "auto" ? std::optional(triton ? sanitize::Policy::kOff : sanitize::Policy::kFinalists)
                                : sanitize::parse_policy(v.sanitize);
  if (!s) return input_error("--sanitize must be auto, finalists, all or off, not '" + v.sanitize + "'");
  g.sanitize = *s;
  auto cg = loop::parse_champion_gates(v.champion_gates);
  if (!cg) return input_error("--champion-gates must be final or each, not '" + v.champion_gates + "'");
  g.champion_gates = *cg;
  auto bp = loop::parse_baseline_profile(v.baseline_profile);
  if (!bp) return input_error("--baseline-profile must be gate, when-needed or after, not '" + v.baseline_profile + "'");
  g.baseline_profile = *bp;
  if (v.sanitize == "auto" && triton)
    std::fprintf(stderr, "kopt optimize: the sanitizer gate is off for a Triton kernel by default (--sanitize finalists "
                         "asks for it; it costs minutes under Python)\n");
  if (!v.shapes.empty()) g.shapes_file = v.shapes;
  if (!v.holdout_shapes.empty()) g.holdout_shapes_file = v.holdout_shapes;
  return loop::validate(g, dims);
}

// The defaults shown are OptimizeOptions' own (loop/options.h), never repeated here.
// --gpus and --ray (issue 21): given on a new run, or on --resume to measure a resumed run elsewhere.
void add_gpu_options(CLI::App& app, std::string& gpus, std::string& ray) {
  app.add_option("--gpus", gpus,
                 "measure on these GPUs, one measuring worker each, candidates handed to whichever is free: all, or a "
                 "list of ordinals such as 0,1,3 (default: the first GPU; with --ray: N, the number of the cluster's GPU slots to use) "
                 "(docs/MULTI_GPU.md)");
  app.add_option("--ray", ray, "measure on a Ray cluster at this address (auto, HOST:PORT, ray://...): one worker per "
                 "GPU slot through `python3 -m kopt_harness ray-worker` (docs/MULTI_GPU.md)");
}

// Applies --gpus/--ray to `o` (empty strings: keep what `o` has); an input error naming the option otherwise.
Status apply_gpu_options(loop::OptimizeOptions& o, const std::string& gpus, const std::string& ray) {
  if (!ray.empty()) o.ray_address = ray;
  if (!gpus.empty() || !ray.empty()) {
    KOPT_TRY_ASSIGN(o.gpus, dispatch::parse_gpus(gpus.empty() ? o.gpus.text() : gpus, !o.ray_address.empty()));
  }
  return ok_status();
}

void add_loop_options(CLI::App& app, loop::OptimizeOptions& o, std::string& time_budget, std::string& generator) {
  const loop::OptimizeOptions d;
  app.add_option("--time-budget", time_budget,
                 fmt::format("the search's wall-time budget after the gates: 300, 300s, 5m, 1h; 0 or none: no limit "
                             "(default {}s)", d.time_budget_s));
  app.add_option("--iterations", o.iterations, fmt::format("a cap on the number of iterations (default {})", d.iterations));
  app.add_option("--branches", o.branches,
                 fmt::format("candidates per iteration (default auto: {} for the built-in generator, {} for a command)",
                             loop::kAutoBranchesBuiltin, loop::kAutoBranchesCommand));
  app.add_option("--ncu-num", o.ncu_num, fmt::format("top Nsight Compute metrics per axis (default {})", d.ncu_num));
  app.add_option("--generator", generator,
                 fmt::format("builtin; llm (a language model behind --llm-url); manual (kopt writes the brief and waits "
                             "for your manifest.json); or a command, e.g. 'python3 my_agent.py' (default {}; "
                             "docs/GENERATORS.md)",
                             loop::generator_text(d.generator)));
  add_llm_options(app, o.llm, true);
  app.add_option("--manual-timeout-s", o.manual_timeout_s,
                 fmt::format("--generator manual: seconds to wait for each iteration's manifest.json (default {}; 0: no limit)",
                             d.manual_timeout_s));
  app.add_option("--finalists", o.finalists, fmt::format("finalists re-timed in paired rounds against the champion (default {})", d.finalists));
  app.add_option("--patience", o.patience,
                 fmt::format("iterations without a significant gain before stopping (default auto: the built-in "
                             "generator stops when its model predicts no gain; another generator: {})",
                             loop::kAutoPatienceCommand));
  app.add_option("--methods-per-iteration", o.budget_total,
                 fmt::format("methods tried per iteration over the three axes (default {})", d.budget_total));
  add_deprecated_alias(app, "--budget-total", "--methods-per-iteration", o.budget_total);
  app.add_option("--methods-per-axis", o.budget_per_axis, fmt::format("at most this many methods per axis (default {})", d.budget_per_axis));
  add_deprecated_alias(app, "--budget-per-axis", "--methods-per-axis", o.budget_per_axis);
  app.add_option("--measure-budget-s", o.max_time_s, fmt::format("seconds of timing per candidate (default {})", d.max_time_s));
  add_deprecated_alias(app, "--max-time-s", "--measure-budget-s", o.max_time_s);
  app.add_option("--near-peak", o.near_peak_efficiency,
                 fmt::format("efficiency (floor / time, 0-1] at which the champion counts as near peak; the run stops "
                             "there after two iterations without a significant gain (one at the roof itself: efficiency >= 1; default {})", d.near_peak_efficiency))
      ->check(CLI::Range(0.01, 1.0).description(""));  // the help says the range; no "FLOAT:FLOAT in [0.01 - 1]"
  app.add_option("--search-seed", o.seed, fmt::format("random seed of the built-in search (default {}; --seeds is the "
                                                     "number of input sets checked)", d.seed));
  add_deprecated_alias(app, "--seed", "--search-seed", o.seed);
  app.add_flag("--quiet", o.quiet, "no progress output");
  add_json_option(app, o.json_out, "the summary (summary.json's content)");
}

// How the command line reports a run: a finished run's summary to --json (a file, or stdout with -), then as markdown
// (unless --quiet) where the human report goes beside --json (util/output.h), then the outcome's message on stderr
// (report_outcome, cli/run_outcome.h); the exit code. A --json that cannot be written fails the command; the run directory keeps
// summary.json.
int report_run(const loop::RunOutcome& r, const loop::OptimizeOptions& o) {
  if (!r.summary.is_null())
    if (auto st = util::write_json_document(o.json_out, r.summary); !st) return fail(st.error());
  if (!o.quiet && !r.summary.is_null()) std::fputs(report::render_markdown(r.summary).c_str(), util::report_stream(o.json_out));
  return report_outcome(r);
}

// A Triton kernel's copies (a derived space's annotated copy, generated candidates) run as the user's file: the
// harness gives them its __file__ and folder (KOPT_KERNEL_ORIGIN, python/kopt_harness/refmod.py), so a kernel that
// finds its package or siblings beside itself imports them from a run directory too. Set before the loop starts a
// thread (setenv).
int run_optimize(const loop::OptimizeOptions& o) {
  toolchain::run_kernel_copies_as(o.job.kernel);
  return report_run(loop::optimize(o), o);
}

}  // namespace

int cmd_optimize(const Args& args) {
  loop::OptimizeOptions o;
  bool resume = std::find(args.begin(), args.end(), "--resume") != args.end() ||
                std::any_of(args.begin(), args.end(), [](const std::string& a) { return a.rfind("--resume=", 0) == 0; });
  if (resume) {
    CLI::App app{"kopt optimize --resume RUN_DIR: continue an interrupted run from its last completed step", "kopt optimize"};
    std::string dir;
    app.add_option("--resume", dir, "the run directory (kopt_runs/run_YYYYmmdd_HHMMSS)")->required();
    bool quiet = false;
    std::string json;
    int iterations = -1;
    std::string time_budget;
    app.add_flag("--quiet", quiet, "no progress output");
    add_json_option(app, json, "the summary (summary.json's content)");
    app.add_option("--iterations", iterations, "raise or lower the maximum number of iterations");
    app.add_option("--time-budget", time_budget, "raise or lower the search's time budget (counted over the whole run)");
    // A run stopped by a language-model endpoint can continue against a fixed URL, model or key variable.
    std::string llm_url, llm_model, llm_key_env;
    double llm_timeout_s = -1, manual_timeout_s = -1;
    app.add_option("--llm-url", llm_url, "--generator llm: a new endpoint URL");
    app.add_option("--llm-model", llm_model, "--generator llm: a new model name");
    app.add_option("--llm-key-env", llm_key_env, "--generator llm: a new variable for the key");
    app.add_option("--llm-timeout-s", llm_timeout_s, "--generator llm: a new request time limit");
    app.add_option("--manual-timeout-s", manual_timeout_s, "--generator manual: a new wait limit");
    std::string gpus, ray;
    add_gpu_options(app, gpus, ray);
    std::string db_path;
    bool no_db = false;
    add_db_record_options(app, db_path, no_db);
    if (auto rc = parse_args(app, args); rc) return *rc;
    auto j = util::read_json(std::filesystem::path(dir) / "options.json");
    if (!j) {
      return fail(input_error("--resume " + dir + ": not a run directory (" + j.error().message + ")"));
    }
    auto opts = loop::options_from_json(*j);
    if (!opts) return fail(opts.error());
    o = *opts;
    o.resume = dir;
    o.quiet = quiet;
    o.json_out = json;
    if (auto st = check_db_record_options(db_path, no_db); !st) return fail(st.error());
    o.db_path = db_path;
    o.no_db = no_db;
    if (iterations >= 0) o.iterations = iterations;
    if (!time_budget.empty()) {
      auto b = loop::parse_duration_s(time_budget);
      if (!b) return fail(input_error("--time-budget: " + b.error().message));
      o.time_budget_s = *b;
    }
    if (!llm_url.empty()) o.llm.url = llm_url;
    if (!llm_model.empty()) o.llm.model = llm_model;
    if (!llm_key_env.empty()) o.llm.key_env = llm_key_env;
    if (llm_timeout_s >= 0) o.llm.timeout_s = llm_timeout_s;
    if (manual_timeout_s >= 0) o.manual_timeout_s = manual_timeout_s;
    if (auto st = apply_gpu_options(o, gpus, ray); !st) return fail(st.error());
    if (o.generator.kind == loop::GeneratorKind::kLlm)
      if (auto rc = check_llm_endpoint("kopt optimize", o.llm); rc) return *rc;
    return run_optimize(o);
  }
  CLI::App app{"kopt optimize: the roofline-guided branch-and-select loop", "kopt optimize"};
  KernelOptionValues v;
  GateOptionValues gv;
  add_kernel_options(app, o.job, v);
  std::string time_budget, generator;
  add_loop_options(app, o, time_budget, generator);
  add_gate_options(app, o.gates, gv);
  app.add_option("--compile-jobs", o.job.compile_jobs, "auto (from cores and free memory) or N (default auto)");
  std::string gpus, ray;
  add_gpu_options(app, gpus, ray);
  add_db_record_options(app, o.db_path, o.no_db);
  app.add_flag("--remeasure", o.remeasure,
               "measure every configuration, even one the results database holds under the same key (default: such a "
               "configuration is reused, and re-raced only where it could be crowned; docs/DATABASE.md \"Reuse\")");
  bool no_warm_start = false, no_strategy_memory = false;
  app.add_flag("--no-warm-start", no_warm_start,
               "start the first design from this run's space alone (default: a run at new dims measures first the best "
               "configurations the results database holds at the nearest shapes; docs/DATABASE.md \"Warm start\")");
  app.add_flag("--no-strategy-memory", no_strategy_memory,
               "rank methods by this run's evidence alone (default: methods that paid off at this roofline position in "
               "past runs on this GPU rank first among equals; docs/SEARCH.md \"Strategy memory\")");
  std::string resume_dir;  // documented here; a --resume command line is parsed above, by its own options
  app.add_option("--resume", resume_dir, "continue an interrupted run from its last completed step: kopt optimize --resume "
                 "RUN_DIR [--iterations N] [--time-budget T] [--gpus G] [--quiet] [--json FILE|-] (see kopt optimize --resume x --help)")
      ->type_name("RUN_DIR");
  app.footer("Gates run first (hardware, correctness, timing, Nsight Compute); no candidate is written before they pass.\n"
             "Interrupt with Ctrl-C and continue with: kopt optimize --resume RUN_DIR");
  Dims dims;
  if (auto rc = parse_args_with_dims(app, args, dims, v.kernel); rc) return *rc;
  if (auto st = finish_kernel_job(o.job, v, dims); !st) return fail(st.error());
  if (auto st = check_db_record_options(o.db_path, o.no_db); !st) return fail(st.error());
  if (auto st = finish_gate_options(o.gates, gv, dims, o.job.kernel.extension() == ".py"); !st) return fail(st.error());
  if (!time_budget.empty()) {
    auto b = loop::parse_duration_s(time_budget);
    if (!b) return fail(input_error("--time-budget: " + b.error().message));
    o.time_budget_s = *b;
  }
  if (!generator.empty() || std::any_of(args.begin(), args.end(), [](const std::string& a) {
        return a == "--generator" || a.rfind("--generator=", 0) == 0;
      })) {
    auto g = loop::parse_generator(generator);
    if (!g) return fail(g.error());
    o.generator = *g;
  }
  o.out = v.out;
  o.warm_start = !no_warm_start;
  o.strategy_memory = !no_strategy_memory;
  if (auto st = apply_gpu_options(o, gpus, ray); !st) return fail(st.error());
  // Checked beside the hardware gate and the early golden data, before any run directory (loop/options.h).
  o.contract_check = [job = o.job] { return check_contract_first("optimize", job); };
  // A language model's endpoint is checked before any GPU work: a bad URL or key costs seconds, not the gates.
  if (o.generator.kind == loop::GeneratorKind::kLlm)
    if (auto rc = check_llm_endpoint("kopt optimize", o.llm); rc) return *rc;
  if (o.generator.kind == loop::GeneratorKind::kManual && o.manual_timeout_s < 0)
    return fail(input_error("--manual-timeout-s must be >= 0 (0: no limit)"));
  return run_optimize(o);
}

}  // namespace kopt::cli
