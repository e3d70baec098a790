#include "loop/optimize.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "compile/pool.h"
#include "doctor/doctor.h"
#include "loop/decisions.h"
#include "loop/numerics.h"
#include "loop/state.h"
#include "pipeline/placement.h"
#include "pipeline/triton.h"
#include "sass/binaries.h"
#include "profile/profiler.h"
#include "profile/query_metrics.h"
#include "profile/report.h"
#include "report/summary.h"
#include "roofline/measure.h"
#include "roofline/svg.h"
#include "runner/launch.h"
#include "sass/analysis.h"
#include "sass/mix.h"
#include "search/annotations.h"
#include "search/builtin_generator.h"
#include "search/external_generator.h"
#include "search/registry.h"
#include "search/space.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

util::Json options_to_json(const OptimizeOptions& o) {
  const auto& j = o.job;
  return {{"kernel", fs::absolute(j.kernel).string()}, {"ref", fs::absolute(j.ref).string()}, {"dims", j.dims},
          {"seeds", j.seeds}, {"ptr_size", j.ptr_size}, {"numerics", search::numerics_mode_name(j.numerics)},
          {"atol", j.atol ? util::Json(*j.atol) : util::Json(nullptr)}, {"rtol", j.rtol ? util::Json(*j.rtol) : util::Json(nullptr)},
          {"arch", j.arch}, {"nvcc_flags", j.nvcc_flags}, {"include_dirs", j.include_dirs}, {"defines", j.defines},
          {"compile_jobs", j.compile_jobs}, {"run_timeout_s", j.run_timeout_s}, {"iterations", o.iterations},
          {"branches", o.branches}, {"ncu_num", o.ncu_num}, {"finalists", o.finalists}, {"patience", o.patience},
          {"budget_total", o.budget_total}, {"budget_per_axis", o.budget_per_axis},
          {"near_peak_efficiency", o.near_peak_efficiency}, {"generator", o.generator},
          {"max_time_s", o.max_time_s}, {"paired_rounds", o.paired_rounds}, {"seed", o.seed}};
}

Result<OptimizeOptions> options_from_json(const util::Json& j) {
  OptimizeOptions o;
  try {
    o.job.kernel = j.at("kernel").get<std::string>();
    o.job.ref = j.at("ref").get<std::string>();
    o.job.dims = j.at("dims").get<cli::Dims>();
    o.job.seeds = j.value("seeds", 3);
    o.job.ptr_size = j.value("ptr_size", 0LL);
    auto mode = search::parse_numerics_mode(j.value("numerics", std::string("reference")));
    if (!mode) return input_error("options.json: bad numerics mode");
    o.job.numerics = *mode;
    if (j.contains("atol") && j["atol"].is_number()) o.job.atol = j["atol"].get<double>();
    if (j.contains("rtol") && j["rtol"].is_number()) o.job.rtol = j["rtol"].get<double>();
    o.job.arch = j.value("arch", std::string("sm_90"));
    o.job.nvcc_flags = j.value("nvcc_flags", std::vector<std::string>{});
    o.job.include_dirs = j.value("include_dirs", std::vector<std::string>{});
    o.job.defines = j.value("defines", std::map<std::string, std::string>{});
    o.job.compile_jobs = j.value("compile_jobs", std::string("auto"));
    o.job.run_timeout_s = j.value("run_timeout_s", 120.0);
    o.iterations = j.value("iterations", 3);
    o.branches = j.value("branches", 4);
    o.ncu_num = j.value("ncu_num", 5);
    o.finalists = j.value("finalists", 2);
    o.patience = j.value("patience", 1);
    o.budget_total = j.value("budget_total", 3);
    o.budget_per_axis = j.value("budget_per_axis", 2);
    o.near_peak_efficiency = j.value("near_peak_efficiency", 0.80);
    o.generator = j.value("generator", std::string("builtin"));
    o.max_time_s = j.value("max_time_s", 2.0);
    o.paired_rounds = j.value("paired_rounds", 30);
    o.seed = j.value("seed", 1ULL);
  } catch (const std::exception& e) {
    return input_error(std::string("options.json is malformed: ") + e.what());
  }
  return o;
}

namespace {

using Clock = std::chrono::steady_clock;

struct CandidateRun {
  search::Candidate candidate;
  compile::CompileResult build;
  runner::RunOutcome outcome;
  search::CandidateStatus status = search::CandidateStatus::kOk;
  std::string note;
  util::Json sass = util::Json::object();  // method id -> verification
};

class Optimizer {
 public:
  explicit Optimizer(OptimizeOptions o) : o_(std::move(o)) {}
  int run();

 private:
  template <typename... A>
  void say(fmt::format_string<A...> f, A&&... a) {
    if (!o_.quiet) std::fprintf(stderr, "%s\n", fmt::format(f, std::forward<A>(a)...).c_str());
  }
  // Adds the wall time of a scope to state.phase_seconds[name], exclusively: a nested phase (a profile inside
  // the gates) pauses the enclosing one, so the phases add up to the run's wall time.
  class Phase {
   public:
    Phase(Optimizer& o, std::string n) : o_(o), n_(std::move(n)) {
      auto now = Clock::now();
      if (!o_.phase_stack_.empty()) o_.flush_phase(now);
      o_.phase_stack_.push_back({n_, now});
    }
    ~Phase() {
      o_.flush_phase(Clock::now());
      o_.phase_stack_.pop_back();
      if (!o_.phase_stack_.empty()) o_.phase_stack_.back().second = Clock::now();
    }
   private:
    Optimizer& o_;
    std::string n_;
  };
  void flush_phase(Clock::time_point now) {
    auto& [name, since] = phase_stack_.back();
    st_.phase_seconds[name] += std::chrono::duration<double>(now - since).count();
    since = now;
  }
  std::vector<std::pair<std::string, Clock::time_point>> phase_stack_;
  bool triton() const { return prep_.backend == "triton"; }

  Status save_state() { return util::write_json_atomic(dir_ / "state.json", "state", to_json(st_)); }
  int stop(const std::string& stage, const Error& e, util::Json tried);
  int finish(StopReason reason, const std::string& detail);
  int interrupted_exit();
  Status load_space();
  Result<pipeline::Prepared> prepare_inputs(bool resuming);
  // One slot per library (CUDA) or per Triton configuration (the candidate's); `dump_cubins` for Triton SASS.
  runner::RunOutcome run(const std::vector<fs::path>& libs, const std::vector<const search::Candidate*>& cands,
                         const fs::path& result, const std::string& mode, const fs::path& dump_cubins = {});
  std::optional<runner::PairedComparison> paired(const fs::path& incumbent, const search::Candidate& inc_c,
                                                 const fs::path& candidate, const search::Candidate& cand_c, const fs::path& out);
  std::vector<CandidateRun> measure(std::vector<search::Candidate> cands, const fs::path& iter_dir, const std::string& what);
  compile::CompileRequest request_for(const search::Candidate& c, const fs::path& out_dir);
  util::Json sass_check(const std::vector<fs::path>& binaries, const search::Candidate& c);
  Result<std::map<std::string, double>> profile(const fs::path& lib, const search::Candidate* c, const fs::path& out_dir,
                                                const std::string& name);
  Result<roofline::RooflineResult> place(const runner::TimingStats& t, const fs::path& out_dir, const std::string& label);
  Status write_champion();
  util::Json summary_json();
  std::map<Axis, int> budget_from_roofline() const;

  OptimizeOptions o_;
  fs::path dir_;
  RunState st_;
  util::SystemRunner sys_;
  pipeline::Prepared prep_;
  std::optional<search::SearchSpace> space_;
  const search::Registry* reg_ = nullptr;
  std::string source_text_;
  device::GpuInfo gpu_;
  std::optional<roofline::Ceilings> ceilings_;
  profile::ProfilePlan plan_;
  util::Json baseline_result_;  // the baseline's runner result (per-seed errors for strict mode)
  int jobs_ = 1;
};

runner::RunOutcome Optimizer::run(const std::vector<fs::path>& libs, const std::vector<const search::Candidate*>& cands,
                                  const fs::path& result, const std::string& mode, const fs::path& dump_cubins) {
  runner::RunRequest r;
  if (triton()) {
    r.triton_kernel = prep_.kernel;
    for (const auto* c : cands) r.triton_configs.push_back(c ? pipeline::triton_config(*c) : prep_.triton_config);
    r.dump_cubin_dir = dump_cubins;
  } else {
    r.libs = libs;
  }
  r.golden_dir = prep_.golden_dir;
  r.result_json = result;
  r.mode = mode;
  r.tol = prep_.tol;
  r.max_time_s = o_.max_time_s;
  r.rounds = o_.paired_rounds;
  r.timeout_s = o_.job.run_timeout_s + 4 * o_.max_time_s;
  return runner::run_candidate(r, sys_);
}

std::optional<runner::PairedComparison> Optimizer::paired(const fs::path& inc, const search::Candidate& inc_c,
                                                          const fs::path& cand, const search::Candidate& cand_c, const fs::path& out) {
  auto r = run({inc, cand}, {&inc_c, &cand_c}, out, "paired");
  if (r.status != runner::RunStatus::kOk || !r.details.contains("libs") || r.details["libs"].size() != 2) return std::nullopt;
  auto a = r.details["libs"][0]["samples_ms"].get<std::vector<double>>();
  auto b = r.details["libs"][1]["samples_ms"].get<std::vector<double>>();
  return runner::compare_paired(a, b);
}

compile::CompileRequest Optimizer::request_for(const search::Candidate& c, const fs::path& out_dir) {
  auto req = pipeline::compile_request(o_.job, c.id, c.source, out_dir);
  for (const auto& [k, v] : c.defines) req.defines[k] = v;
  for (const auto& f : c.flags) {
    if (f == "-arch=sm_90a") req.arch = "sm_90a";  // the sm_90a method: the compile module emits -gencode
    else req.extra_flags.push_back(f);
  }
  return req;
}

util::Json Optimizer::sass_check(const std::vector<fs::path>& binaries, const search::Candidate& c) {
  util::Json out = util::Json::object();
  // CUDA: the kernels defined in the candidate's source; Triton: every function of the cubins it compiled.
  auto analysis = triton() ? sass::analyze_binaries(binaries, {}, "", sys_)
                           : sass::analyze(binaries.front(), sass::kernel_names_from_source(c.source, o_.job.cutlass), "", sys_);
  util::Json mix = util::Json::array();
  for (const auto* f : analysis.selected_functions()) mix.push_back({{"function", f->demangled}, {"mix", sass::to_json(sass::instruction_mix(*f))}});
  out["kernels"] = mix;
  out["methods"] = util::Json::object();
  for (const auto& m : c.methods) {
    const search::Method* meth = search::find_method(m);
    if (!meth) continue;
    auto v = sass::verify_method(analysis, meth->sass);
    out["methods"][m] = v ? sass::to_json(*v) : util::Json{{"status", "tool_error"}, {"message", v.error().message}};
  }
  return out;
}

std::vector<CandidateRun> Optimizer::measure(std::vector<search::Candidate> cands, const fs::path& iter_dir, const std::string& what) {
  std::vector<CandidateRun> runs;
  std::vector<compile::CompileRequest> reqs;
  for (auto& c : cands) {
    fs::path cdir = iter_dir / "candidates" / c.id;
    fs::create_directories(cdir);
    (void)util::write_json_atomic(cdir / "candidate.json", "candidate", search::to_json(c));
    reqs.push_back(request_for(c, cdir));
  }
  std::vector<compile::CompileResult> builds;
  if (triton()) {  // Triton compiles at the first launch, inside the measuring child
    for (const auto& c : cands) {
      compile::CompileResult b;
      b.name = c.id;
      b.status = compile::CompileStatus::kOk;
      b.library = prep_.kernel;
      builds.push_back(b);
    }
  } else {
    Phase p(*this, "compile");
    say("  {}: compiling {} on {} job(s)...", what, reqs.size(), jobs_ > 0 ? std::to_string(jobs_) : std::string("auto"));
    builds = compile::compile_batch(reqs, {jobs_, ""}, sys_, [&](const compile::BatchProgress& pr, const compile::CompileResult&) {
      if (!o_.quiet) std::fprintf(stderr, "\r    %s", compile::format_progress(pr).c_str());
    });
    if (!o_.quiet) std::fprintf(stderr, "\n");
  }
  for (size_t i = 0; i < cands.size(); ++i) {
    CandidateRun cr;
    cr.candidate = cands[i];
    cr.build = builds[i];
    fs::path cdir = iter_dir / "candidates" / cands[i].id;
    (void)util::write_json_atomic(cdir / "build.json", "build", compile::to_json(cr.build));
    if (!cr.build.ok()) {
      cr.status = search::CandidateStatus::kCompileFailed;
      cr.note = std::string(compile::to_string(cr.build.status));
      runs.push_back(cr);
      continue;
    }
    if (!triton()) {
      cr.sass = sass_check({cr.build.library}, cr.candidate);
      (void)util::write_json_atomic(cdir / "sass.json", "sass", cr.sass);
    }
    if (util::interrupted()) break;
    {
      Phase p(*this, "measure");
      cr.outcome = run({cr.build.library}, {&cr.candidate}, cdir / "run.json", "time", triton() ? cdir / "cubins" : fs::path());
    }
    if (triton()) {
      cr.sass = sass_check(pipeline::triton_cubins(cr.outcome.details), cr.candidate);
      (void)util::write_json_atomic(cdir / "sass.json", "sass", cr.sass);
    }
    if (cr.outcome.status == runner::RunStatus::kInterrupted) break;  // not a verdict on the candidate
    switch (cr.outcome.status) {
      case runner::RunStatus::kOk: cr.status = search::CandidateStatus::kOk; break;
      case runner::RunStatus::kTimedOut: cr.status = search::CandidateStatus::kTimedOut; break;
      case runner::RunStatus::kCrashed:
      case runner::RunStatus::kCudaError: cr.status = search::CandidateStatus::kCrashed; break;
      default: cr.status = search::CandidateStatus::kIncorrect;
    }
    cr.note = cr.outcome.message;
    if (cr.status == search::CandidateStatus::kOk && o_.job.numerics == search::NumericsMode::kStrict) {
      auto v = judge_strict(cr.outcome.details, baseline_result_);
      if (!v.ok) {
        cr.status = search::CandidateStatus::kIncorrect;
        cr.note = v.reason;
      }
    }
    say("    {:<10} {:<10} {}", cr.candidate.id, search::candidate_status_name(cr.status),
        cr.status == search::CandidateStatus::kOk && cr.outcome.timing ? fmt::format("{:.4f} ms", cr.outcome.timing->median_ms) : cr.note);
    runs.push_back(cr);
  }
  return runs;
}

Result<std::map<std::string, double>> Optimizer::profile(const fs::path& lib, const search::Candidate* c, const fs::path& out_dir,
                                                        const std::string& name) {
  Phase p(*this, "profile");
  runner::RunRequest rr;
  if (triton()) {
    rr.triton_kernel = prep_.kernel;
    rr.triton_configs = {c ? pipeline::triton_config(*c) : prep_.triton_config};
  } else {
    rr.libs = {lib};
  }
  rr.golden_dir = prep_.golden_dir;
  rr.result_json = out_dir / (name + "_profile_run.json");
  rr.mode = "profile";
  rr.tol = prep_.tol;
  profile::ProfileRequest req;
  req.target_argv = runner::child_argv(rr);
  req.out_dir = out_dir;
  req.name = name;
  req.ncu_path = toolchain::find_ncu();
  req.chip = profile::chip_for_compute_capability(gpu_.cc_major, gpu_.cc_minor);
  KOPT_TRY_ASSIGN(auto r, profile::profile_call(req, plan_, sys_, o_.ncu_num));
  st_.profile_plan = profile::to_json(plan_);
  std::map<std::string, double> metrics;
  for (const auto& [k, v] : r.aggregate.metrics)
    if (v.value) metrics[k] = pipeline::ncu_to_base_units(*v.value, v.unit);
  (void)util::write_file_atomic(out_dir / (name + "_summary.txt"), profile::format_summary(r, o_.ncu_num));
  return metrics;
}

Result<roofline::RooflineResult> Optimizer::place(const runner::TimingStats& t, const fs::path& out_dir, const std::string& label) {
  roofline::AnalyzeOptions ao;
  ao.near_peak_efficiency = o_.near_peak_efficiency;
  ao.budget.total = o_.budget_total;
  ao.budget.max_per_axis = o_.budget_per_axis;
  KOPT_TRY_ASSIGN(auto r, pipeline::place(*ceilings_, prep_.manifest, prep_.buffer_dtypes, t, st_.metrics, label, ao));
  st_.roofline = roofline::to_json(r);
  (void)util::write_json_atomic(out_dir / "roofline.json", "roofline", st_.roofline);
  std::vector<roofline::SvgPoint> pts;
  if (auto pt = roofline::svg_point(r)) pts.push_back(*pt);
  (void)util::write_file_atomic(out_dir / "roofline.svg", roofline::render_svg(*ceilings_, pts));
  return r;
}

std::map<Axis, int> Optimizer::budget_from_roofline() const {
  std::map<Axis, int> slots;
  for (Axis a : kAllAxes) slots[a] = 0;
  if (st_.roofline.contains("budget") && st_.roofline["budget"].contains("methods"))
    for (Axis a : kAllAxes) slots[a] = st_.roofline["budget"]["methods"].value(std::string(axis_name(a)), 0);
  return slots;
}

Status Optimizer::load_space() {
  KOPT_TRY_ASSIGN(source_text_, util::read_file(o_.job.kernel));
  KOPT_TRY_ASSIGN(auto reg, search::registry());
  reg_ = &reg.get();
  KOPT_TRY_ASSIGN(auto ann, search::parse_annotations(source_text_, o_.job.kernel.string()));
  search::SpaceOptions so;
  if (pipeline::is_triton_kernel(o_.job.kernel)) so.backend = search::Backend::kTriton;
  so.numerics = o_.job.numerics;
  so.arch = 90;
  KOPT_TRY_ASSIGN(space_, search::build_space(ann, *reg_, so));
  return ok_status();
}

int Optimizer::stop(const std::string& stage, const Error& e, util::Json tried) {
  if (util::interrupted()) return interrupted_exit();  // a killed child is not a failed gate: stay resumable
  util::Json j = {{"stage", stage}, {"reason", e.message}, {"exit_code", to_int(e.code)}, {"tried", std::move(tried)}};
  (void)util::write_json_atomic(dir_ / "stop.json", "stop", j);
  st_.stop_reason = stage == "interrupted" ? "interrupted" : "gate_failed";
  st_.stop_detail = stage + ": " + e.message;
  (void)save_state();
  auto s = summary_json();
  (void)util::write_json_atomic(dir_ / "summary.json", "summary", s);
  (void)util::write_file_atomic(dir_ / "summary.md", report::render_markdown(s));
  std::fprintf(stderr, "kopt optimize: stopped at the %s gate: %s\n  run directory: %s (stop.json, summary.md)\n",
               stage.c_str(), e.message.c_str(), dir_.c_str());
  return to_int(e.code);
}

int Optimizer::interrupted_exit() {
  st_.stop_reason = "";  // not finished: resumable
  (void)save_state();
  std::fprintf(stderr, "\nkopt optimize: interrupted. The run directory is consistent; continue with:\n  kopt optimize --resume %s\n",
               dir_.c_str());
  return to_int(ExitCode::kInterrupted);
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
  std::string name = o_.job.kernel.filename().string();
  if (triton()) {
    // A Python kernel takes its configuration as run_kernel's keyword arguments: written beside it.
    util::Json cfg = pipeline::triton_config(c);
    std::string py_head;
    for (const auto& line : util::split_lines(head)) py_head += "#" + line.substr(2) + "\n";
    py_head += "# run_kernel(**inputs, **KOPT_CHAMPION_CONFIG)\nKOPT_CHAMPION_CONFIG = " + cfg.dump() + "\n";
    KOPT_TRY(util::write_file_atomic(cdir / name, py_head + "\n" + src));
    KOPT_TRY(util::write_json_atomic(cdir / "config.json", "champion_config", {{"config", cfg}}));
  } else {
    for (const auto& [k, v] : c.defines) head += "#define " + k + " " + v + "\n";
    KOPT_TRY(util::write_file_atomic(cdir / name, head + "\n" + src));
  }
  return util::write_json_atomic(cdir / "champion.json", "champion",
                                 {{"candidate", search::to_json(c)}, {"median_ms", st_.champion->median_ms}, {"file", (cdir / name).string()}});
}

util::Json Optimizer::summary_json() {
  util::Json s;
  s["schema"] = report::kSummarySchema;
  s["meta"] = util::make_meta("summary");
  s["kernel"] = o_.job.kernel.string();
  s["dims"] = cli::format_dims(o_.job.dims);
  s["numerics_mode"] = search::numerics_mode_name(o_.job.numerics);
  s["generator"] = o_.generator;
  s["sizes_guessed"] = prep_.sizes_guessed;
  util::Json h = util::Json::object();
  if (st_.baseline) h["baseline_ms"] = st_.baseline->median_ms;
  if (st_.champion) {
    h["champion_ms"] = st_.champion->median_ms;
    h["champion_id"] = st_.champion->candidate.id;
    if (st_.baseline) h["speedup_vs_baseline"] = st_.baseline->median_ms / st_.champion->median_ms;
    if (st_.reference_ms > 0) {
      h["reference_ms"] = st_.reference_ms;
      h["speedup_vs_reference"] = st_.reference_ms / st_.champion->median_ms;
    }
  }
  s["headline"] = h;
  if (st_.roofline.is_object()) {
    const auto& r = st_.roofline;
    util::Json rs = {{"mode", r.value("mode", std::string())}, {"near_peak", r.value("verdict", std::string()) == "near_peak"},
                     {"verdict", r.value("verdict", std::string())}};
    if (r.contains("floor") && r["floor"].is_object()) {
      rs["floor_ms"] = r["floor"].value("floor_ms", 0.0);
      rs["bound"] = r["floor"].value("binding", std::string());
    }
    if (r.contains("efficiency") && r["efficiency"].is_number()) rs["efficiency"] = r["efficiency"].get<double>();
    s["roofline"] = rs;
  }
  s["timeline"] = st_.timeline;
  util::Json methods = util::Json::object();
  for (auto v : {search::Verdict::kEffective, search::Verdict::kIneffective, search::Verdict::kImplementationFailed,
                 search::Verdict::kUnverified, search::Verdict::kNotAblatable})
    methods[std::string(search::verdict_name(v))] = util::Json::array();
  for (const auto& v : st_.verdicts)
    methods[std::string(search::verdict_name(v.verdict))].push_back(
        fmt::format("{} (iteration {}{})", v.method, v.iteration,
                    v.measured_gain && v.verdict != search::Verdict::kEffective ? "; the ablation measured a saving" : ""));
  s["methods"] = methods;
  s["frontier"] = st_.frontier;
  s["stop"] = {{"reason", st_.stop_reason}, {"detail", st_.stop_detail}};
  s["phase_seconds"] = st_.phase_seconds;
  s["champion_path"] = (dir_ / "champion" / o_.job.kernel.filename()).string();
  s["run_dir"] = dir_.string();
  return s;
}

int Optimizer::finish(StopReason reason, const std::string& detail) {
  st_.stop_reason = std::string(stop_name(reason));
  st_.stop_detail = detail.empty() ? std::string(describe(reason)) : detail;
  (void)write_champion();
  (void)save_state();
  (void)util::write_json_atomic(dir_ / "stop.json", "stop", {{"stage", "loop"}, {"reason", st_.stop_reason}, {"detail", st_.stop_detail}});
  auto s = summary_json();
  (void)util::write_json_atomic(dir_ / "summary.json", "summary", s);
  std::string md = report::render_markdown(s);
  (void)util::write_file_atomic(dir_ / "summary.md", md);
  if (o_.print_json) std::puts(s.dump(2).c_str());
  else if (!o_.quiet) std::fputs(md.c_str(), stdout);
  return 0;
}

Result<pipeline::Prepared> Optimizer::prepare_inputs(bool resuming) {
  auto say_fn = [this](const std::string& s) { say("  {}", s); };
  if (resuming && !pipeline::is_triton_kernel(o_.job.kernel) && fs::exists(dir_ / "golden" / "manifest.json")) {
    pipeline::Prepared p;
    KOPT_TRY_ASSIGN(p.source_text, util::read_file(o_.job.kernel));
    KOPT_TRY_ASSIGN(p.signature, contract::parse_solve_signature(p.source_text, o_.job.kernel.string()));
    KOPT_TRY_ASSIGN(p.manifest, util::read_json(dir_ / "golden" / "manifest.json"));
    p.golden_dir = dir_ / "golden";
    p.sizes_guessed = p.manifest.value("sizes_guessed", false);
    p.tol = pipeline::resolve_tolerance(p.manifest, o_.job.numerics, o_.job.atol, o_.job.rtol, &p.tol_source);
    for (const auto& b : p.manifest.value("buffers", util::Json::array())) p.buffer_dtypes.push_back(b.value("dtype", ""));
    auto builds = compile::compile_batch({pipeline::compile_request(o_.job, "baseline", o_.job.kernel, dir_ / "build")}, {1, ""}, sys_);
    p.build = builds.front();
    if (!p.build.ok()) return input_error("the kernel no longer compiles: " + p.build.log_text);
    say_fn("resumed: golden data reused from " + p.golden_dir.string());
    return p;
  }
  return pipeline::prepare(o_.job, dir_, sys_, true, say_fn);
}

int Optimizer::run() {
  // ---- Inputs, before any GPU work ----
  if (auto st = pipeline::validate(o_.job); !st) {
    std::fprintf(stderr, "kopt optimize: %s\n", st.error().message.c_str());
    return to_int(st.error().code);
  }
  if (o_.iterations < 0 || o_.branches < 1 || o_.ncu_num < 1 || o_.finalists < 1 || o_.max_time_s <= 0) {
    std::fprintf(stderr, "kopt optimize: --iterations must be >= 0, --branches, --ncu-num and --finalists >= 1, --max-time-s > 0\n");
    return to_int(ExitCode::kInput);
  }
  if (auto st = load_space(); !st) {
    std::fprintf(stderr, "kopt optimize: %s\n", st.error().message.c_str());
    return to_int(st.error().code);
  }
  auto jobs = compile::parse_jobs(o_.job.compile_jobs);
  if (!jobs) {
    std::fprintf(stderr, "kopt optimize: %s\n", jobs.error().message.c_str());
    return to_int(jobs.error().code);
  }
  jobs_ = *jobs;  // 0: auto, sized per batch by the pool
  bool resuming = o_.resume.has_value();
  if (resuming) {
    dir_ = *o_.resume;
    auto j = util::read_json(dir_ / "state.json");
    if (!j) {
      std::fprintf(stderr, "kopt optimize: --resume %s: %s\n", dir_.c_str(), j.error().message.c_str());
      return to_int(ExitCode::kInput);
    }
    auto s = state_from_json(*j);
    if (!s) {
      std::fprintf(stderr, "kopt optimize: %s\n", s.error().message.c_str());
      return to_int(s.error().code);
    }
    st_ = *s;
    if (st_.finished()) {
      std::fprintf(stderr, "kopt optimize: %s already finished (%s); see its summary.md\n", dir_.c_str(), st_.stop_reason.c_str());
      return 0;
    }
    say("kopt optimize: resuming {} after iteration {}", dir_.string(), st_.iterations_done);
  } else {
    auto d = pipeline::make_run_dir(o_.out, "run");
    if (!d) {
      std::fprintf(stderr, "kopt optimize: %s\n", d.error().message.c_str());
      return to_int(d.error().code);
    }
    dir_ = *d;
    (void)util::write_json_atomic(dir_ / "options.json", "options", options_to_json(o_));
    st_.stop.max_iterations = o_.iterations;
    st_.stop.patience = o_.patience;
    say("kopt optimize {} [{}] -> {}", o_.job.kernel.string(), cli::format_dims(o_.job.dims), dir_.string());
  }
  st_.stop.max_iterations = o_.iterations;

  // ---- Gate 1: hardware ----
  {
    Phase p(*this, "gates");
    say("gate 1/4 hardware (kopt doctor)...");
    auto rep = doctor::run_doctor({});
    (void)util::write_json_atomic(dir_ / "env.json", "env", doctor::to_json(rep));
    fs::create_directories(dir_ / "gates");
    (void)util::write_json_atomic(dir_ / "gates" / "hardware.json", "gate", doctor::to_json(rep));
    if (!rep.passed()) return stop("hardware", gate_error("missing or broken: " + util::join(rep.failed_required(), ", ")), doctor::to_json(rep));
    gpu_ = rep.gpus.front();
    std::string nvcc_v, ncu_v;
    for (const auto& c : rep.checks) {
      if (c.name == "nvcc") nvcc_v = c.details.value("version", std::string());
      if (c.name == "ncu") ncu_v = c.details.value("version", std::string());
    }
    util::set_meta_info({gpu_.name, rep.driver_version, nvcc_v, ncu_v});
  }
  if (util::interrupted()) return interrupted_exit();

  // ---- Golden data and the baseline build ----
  {
    Phase p(*this, "gates");
    auto prep = prepare_inputs(resuming);
    if (!prep) return stop("inputs", prep.error(), util::Json::object());
    prep_ = std::move(prep).value();
    if (prep_.manifest.contains("reference_timing") && prep_.manifest["reference_timing"].is_object())
      st_.reference_ms = prep_.manifest["reference_timing"].value("median_ms", 0.0);
  }
  roofline::CeilingsOptions copts;
  copts.cuda_driver_fallback = util::meta_info().driver;
  {
    Phase p(*this, "ceilings");
    auto c = roofline::get_ceilings(gpu_, false, copts);
    if (!c) return stop("hardware", c.error(), {{"step", "device ceilings"}});
    ceilings_ = *c;
  }
  if (!st_.profile_plan.is_null() && !st_.profile_plan.empty()) {
    if (auto pl = profile::plan_from_json(st_.profile_plan); pl) plan_ = *pl;
  }
  fs::path base_dir = dir_ / "iter_00_baseline";
  fs::create_directories(base_dir);
  auto base_candidate = search::baseline_candidate(*space_, *reg_, o_.job.kernel, source_text_);
  base_candidate.id = "baseline";

  if (!st_.gates_passed) {
    Phase p(*this, "gates");
    // ---- Gate 2: correctness on every seed ----
    say("gate 2/4 correctness of the baseline on {} seeds...", o_.job.seeds);
    auto check = run({prep_.build.library}, {nullptr}, dir_ / "gates" / "correctness.json", "check");
    if (check.status != runner::RunStatus::kOk)
      return stop("correctness", validation_error("the baseline is not correct: " + std::string(runner::status_name(check.status)) + ": " + check.message),
                  {{"result", runner::to_json(check)}});
    baseline_result_ = check.details;
    // ---- Gate 3: timing stability ----
    say("gate 3/4 timing stability...");
    auto timed = run({prep_.build.library}, {nullptr}, dir_ / "gates" / "timing.json", "time");
    util::Json tried = util::Json::array();
    tried.push_back(runner::to_json(timed));
    if (timed.timing && timed.timing->stability == runner::Stability::kUnstable) {
      say("  unstable (robust CV {:.1f}%): retrying with 3x the samples budget", 100 * timed.timing->robust_cv);
      double saved = o_.max_time_s;
      o_.max_time_s = saved * 3;
      timed = run({prep_.build.library}, {nullptr}, dir_ / "gates" / "timing_retry.json", "time");
      o_.max_time_s = saved;
      tried.push_back(runner::to_json(timed));
    }
    if (!timed.timing)
      return stop("timing", validation_error("the baseline failed while being timed: " + timed.message), tried);
    if (timed.timing->stability == runner::Stability::kUnstable)
      return stop("timing", gate_error(fmt::format("the baseline's timing is unstable: robust CV {:.1f}%, 95% CI ±{:.1f}% of the "
                                                   "median after {} samples. Something else may be using the GPU, or the "
                                                   "kernel is too short (< 10 µs): use larger dims.",
                                                   100 * timed.timing->robust_cv, 100 * timed.timing->ci95_rel_halfwidth, timed.timing->samples)),
                  tried);
    // ---- Gate 4: Nsight Compute ----
    say("gate 4/4 Nsight Compute profile of the baseline...");
    auto metrics = profile(prep_.build.library, nullptr, base_dir / "profile", "baseline");
    if (!metrics) return stop("ncu", metrics.error(), {{"plan", profile::to_json(plan_)}});
    st_.metrics = *metrics;
    auto placed = place(*timed.timing, base_dir, "baseline");
    if (!placed) return stop("roofline", placed.error(), util::Json::object());
    st_.stop.workload_model = placed->mode == roofline::Mode::kWorkloadModel;
    st_.stop.near_peak = placed->near_peak();
    ChampionRecord b{base_candidate, prep_.build.library.string(), timed.timing->median_ms, (dir_ / "gates" / "timing.json").string()};
    st_.baseline = b;
    st_.champion = b;
    search::Measurement m;
    m.candidate = base_candidate;
    m.median_ms = timed.timing->median_ms;
    st_.history.push_back(m);
    st_.timeline.push_back({{"iteration", 0}, {"champion_id", "baseline"}, {"champion_ms", timed.timing->median_ms},
                            {"improved", false}, {"candidates", 1}, {"correct", 1},
                            {"note", fmt::format("gates passed; {}; stability {}", roofline::describe(placed->verdict),
                                                 runner::describe(timed.timing->stability))}});
    st_.gates_passed = true;
    (void)save_state();
    say("gates passed: baseline {:.4f} ms ({}); roofline: {}", timed.timing->median_ms,
        runner::describe(timed.timing->stability), roofline::describe(placed->verdict));
  } else {
    auto j = util::read_json(dir_ / "gates" / "correctness.json");
    if (j) baseline_result_ = *j;
  }

  // ---- The loop ----
  std::unique_ptr<search::Generator> gen;
  if (o_.generator == "builtin") gen = std::make_unique<search::BuiltinGenerator>();
  else {
    search::ExternalOptions eo;
    eo.timeout_s = o_.generator_timeout_s;
    gen = std::make_unique<search::ExternalGenerator>(o_.generator, sys_, eo);
  }
  while (true) {
    StopReason why = should_stop(st_.stop);
    if (why != StopReason::kNone) return finish(why, "");
    if (util::interrupted()) return interrupted_exit();
    int it = st_.iterations_done + 1;
    fs::path idir = dir_ / fmt::format("iter_{:02d}", it);
    fs::create_directories(idir);
    say("iteration {}/{}: champion {} at {:.4f} ms", it, o_.iterations, st_.champion->candidate.id, st_.champion->median_ms);
    search::GeneratorInput in;
    in.iteration = it;
    in.k = o_.branches;
    in.seed = o_.seed + static_cast<uint64_t>(it);
    in.plan.slots = budget_from_roofline();
    in.numerics = o_.job.numerics;
    in.registry = reg_;
    in.space = &*space_;
    in.iteration_dir = idir;
    in.baseline_source = o_.job.kernel;
    search::Measurement champ_m;
    champ_m.candidate = st_.champion->candidate;
    champ_m.median_ms = st_.champion->median_ms;
    in.champion = champ_m;
    in.history = st_.history;
    in.verdicts = st_.verdicts;
    in.metrics = st_.metrics;
    in.context.dims = o_.job.dims;
    in.context.contract_signature = prep_.signature.normalised;
    in.context.roofline = st_.roofline;
    Result<search::GeneratorOutput> out = internal_error("not run");
    {
      Phase p(*this, "generate");
      out = gen->generate(in);
    }
    if (!out) {
      (void)util::write_json_atomic(idir / "generator_error.json", "generator_error", {{"message", out.error().message}});
      return finish(StopReason::kGeneratorFailed, out.error().message);
    }
    (void)util::write_json_atomic(idir / "plan.json", "plan",
                                  {{"slots", {{"compute", in.plan.slots[Axis::kCompute]}, {"memory", in.plan.slots[Axis::kMemory]},
                                              {"latency", in.plan.slots[Axis::kLatency]}}},
                                   {"selection", search::to_json(out->selection)}, {"notes", out->notes},
                                   {"candidates", [&] { util::Json a = util::Json::array(); for (const auto& c : out->candidates) a.push_back(search::to_json(c)); return a; }()}});
    if (out->candidates.empty()) {
      st_.stop = after_iteration(st_.stop, false, st_.stop.near_peak, true);
      st_.iterations_done = it;
      (void)save_state();
      continue;
    }
    for (size_t i = 0; i < out->candidates.size(); ++i)
      if (out->candidates[i].id.empty()) out->candidates[i].id = fmt::format("i{}c{}", it, i + 1);
    auto runs = measure(out->candidates, idir, "candidates");
    if (util::interrupted()) return interrupted_exit();
    int correct = 0;
    std::vector<Contender> contenders;
    for (const auto& r : runs) {
      search::Measurement m;
      m.candidate = r.candidate;
      m.status = r.status;
      m.iteration = it;
      if (r.status == search::CandidateStatus::kOk && r.outcome.timing) {
        m.median_ms = r.outcome.timing->median_ms;
        ++correct;
        contenders.push_back({r.candidate.id, true, r.outcome.timing->median_ms, static_cast<int>(r.candidate.methods.size())});
      }
      st_.history.push_back(m);
    }
    // ---- Selection: finalists re-timed in paired rounds against the incumbent ----
    util::Json selection = util::Json::array();
    bool improved = false;
    {
      Phase p(*this, "selection");
      auto fins = pick_finalists(contenders, static_cast<size_t>(o_.finalists));
      for (const auto& f : fins) {
        const CandidateRun* cr = nullptr;
        for (const auto& r : runs) if (r.candidate.id == f.id) cr = &r;
        Contender inc{st_.champion->candidate.id, true, st_.champion->median_ms, static_cast<int>(st_.champion->candidate.methods.size())};
        auto cmp = paired(st_.champion->library, st_.champion->candidate, cr->build.library, cr->candidate, idir / ("paired_" + f.id + ".json"));
        if (!cmp) {
          selection.push_back({{"finalist", f.id}, {"error", "paired timing failed"}});
          continue;
        }
        auto d = decide(inc, f, *cmp);
        selection.push_back({{"finalist", f.id}, {"incumbent", inc.id}, {"comparison", runner::to_json(*cmp)},
                             {"decision", d.decision == ChampionDecision::kNewChampion ? "new_champion" : "keep"}, {"reason", d.reason}});
        say("  {} vs {}: {} (time ratio {:.3f}, 95% CI [{:.3f}, {:.3f}], {} paired rounds) -> {}", f.id, inc.id,
            runner::describe(cmp->verdict), cmp->median_ratio, cmp->ci95_low, cmp->ci95_high, cmp->rounds, d.reason);
        if (d.decision == ChampionDecision::kNewChampion) {
          st_.champion = ChampionRecord{cr->candidate, cr->build.library.string(), cr->outcome.timing->median_ms,
                                        (idir / "candidates" / cr->candidate.id / "run.json").string()};
          improved = improved || cmp->verdict == runner::Verdict::kFaster;
        }
      }
    }
    (void)util::write_json_atomic(idir / "selection.json", "selection", {{"finalists", selection}});
    // ---- Ablation of the champion's methods (when it changed) ----
    util::Json ablation = util::Json::array();
    const CandidateRun* champ_run = nullptr;
    for (const auto& r : runs) if (st_.champion && r.candidate.id == st_.champion->candidate.id) champ_run = &r;
    if (champ_run) {
      Phase p(*this, "ablation");
      const auto& cc = champ_run->candidate;
      for (const auto& m : cc.methods) {
        if (util::interrupted()) break;
        auto sass_status = sass::VerifyStatus::kInconclusive;
        if (champ_run->sass["methods"].contains(m)) {
          std::string s = champ_run->sass["methods"][m].value("status", std::string("inconclusive"));
          for (auto vs : {sass::VerifyStatus::kPass, sass::VerifyStatus::kFail, sass::VerifyStatus::kInconclusive,
                          sass::VerifyStatus::kNotApplicable, sass::VerifyStatus::kToolError})
            if (sass::to_string(vs) == s) sass_status = vs;
        }
        bool guarded = cc.guards.count(m) && cc.guards.at(m) &&
                       std::find(cc.not_ablatable.begin(), cc.not_ablatable.end(), m) == cc.not_ablatable.end();
        const search::Method* meth = search::find_method(m);
        bool flag_method = meth && meth->is_flag_method();
        std::optional<Attribution> attr;
        util::Json entry = {{"method", m}, {"sass", sass::to_string(sass_status)}};
        if (guarded || flag_method) {
          search::Candidate off = cc;
          off.id = cc.id + "_no_" + m;
          off.methods.erase(std::remove(off.methods.begin(), off.methods.end(), m), off.methods.end());
          if (flag_method) {
            for (const auto& f : meth->flags) off.flags.erase(std::remove(off.flags.begin(), off.flags.end(), f), off.flags.end());
          } else {
            if (triton()) off.constexprs[compile::method_guard(m)] = 0;
            else off.defines[compile::method_guard(m)] = "0";
            off.guards[m] = false;
          }
          auto offs = measure({off}, idir / "ablation", "ablation of " + m);
          if (!offs.empty() && offs[0].status == search::CandidateStatus::kOk) {
            auto cmp = paired(st_.champion->library, st_.champion->candidate, offs[0].build.library, offs[0].candidate, idir / "ablation" / ("paired_" + m + ".json"));
            if (cmp) {
              attr = attribution_from(*cmp);
              entry["attribution_ms"] = {{"median", attr->median_ms}, {"ci95_low", attr->ci95_low_ms}, {"ci95_high", attr->ci95_high_ms}};
              entry["comparison"] = runner::to_json(*cmp);
            }
          } else if (!offs.empty()) {
            entry["ablated_status"] = search::candidate_status_name(offs[0].status);
            entry["ablated_note"] = offs[0].note;
          }
        }
        auto v = classify(guarded || flag_method, sass_status, attr);
        entry["verdict"] = search::verdict_name(v);
        say("  ablation {}: {}", m, search::verdict_name(v));
        st_.verdicts.push_back({m, v, it, attr && attr->significant(), st_.metrics});
        ablation.push_back(entry);
      }
      (void)util::write_json_atomic(idir / "sass_verification.json", "sass_verification", champ_run->sass);
    }
    (void)util::write_json_atomic(idir / "ablation.json", "ablation", {{"methods", ablation}});
    // ---- Profile and roofline of the champion ----
    bool near_peak = st_.stop.near_peak;
    if (champ_run) {
      auto metrics = profile(champ_run->build.library, &champ_run->candidate, idir / "profile", "champion");
      if (metrics) st_.metrics = *metrics;
      else say("  profile failed: {} (keeping the previous metrics)", metrics.error().message);
      auto placed = place(*champ_run->outcome.timing, idir, champ_run->candidate.id);
      if (placed) near_peak = placed->near_peak();
    }
    // Frontier: the best correct runners-up so far.
    std::vector<std::pair<double, const search::Measurement*>> ok;
    for (const auto& m : st_.history)
      if (m.median_ms && m.status == search::CandidateStatus::kOk && m.candidate.id != st_.champion->candidate.id)
        ok.push_back({*m.median_ms, &m});
    std::sort(ok.begin(), ok.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    st_.frontier = util::Json::array();
    for (size_t i = 0; i < ok.size() && i < 5; ++i)
      st_.frontier.push_back({{"id", ok[i].second->candidate.id}, {"median_ms", ok[i].first}, {"methods", ok[i].second->candidate.methods}});
    st_.timeline.push_back({{"iteration", it}, {"champion_id", st_.champion->candidate.id}, {"champion_ms", st_.champion->median_ms},
                            {"improved", improved}, {"candidates", runs.size()}, {"correct", correct},
                            {"note", out->notes.empty() ? std::string() : out->notes.front()}});
    st_.stop = after_iteration(st_.stop, improved, near_peak, false);
    st_.iterations_done = it;
    (void)save_state();
  }
}

}  // namespace

int run_optimize(OptimizeOptions opts) {
  Optimizer o(std::move(opts));
  return o.run();
}

}  // namespace kopt::loop
