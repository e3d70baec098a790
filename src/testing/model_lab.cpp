#include "testing/model_lab.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "contract/safetensors.h"
#include "contract/signature.h"
#include "loop/per_shape.h"
#include "profile/report.h"
#include "runner/race.h"
#include "runner/sealed.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/memfd.h"
#include "util/process.h"

namespace kopt::loop {

namespace fs = std::filesystem;

HardwareGate ModelLab::hardware() {
  events.push_back("hardware");
  HardwareGate g;
  g.passed = o_.hardware_passes;
  if (!g.passed) g.failed_required = {"gpu"};
  g.report = {{"model", true}, {"passed", g.passed}};
  g.gpu.name = o_.ceilings.gpu_name.empty() ? "model GPU" : o_.ceilings.gpu_name;
  g.gpu.cc_major = 9;
  g.gpu.cc_minor = 0;
  g.gpu.memory_bytes = o_.gpu_memory_bytes;
  g.meta = {g.gpu.name, "model", "model", "model"};
  for (int i = 0; i < std::max(1, o_.gpus); ++i) {
    auto gi = g.gpu;
    gi.index = i;
    gi.uuid = "GPU-model-" + std::to_string(i);
    g.gpus.push_back(gi);
  }
  return g;
}

Result<pipeline::Prepared> ModelLab::prepare(const fs::path& run_dir, bool, const pipeline::Say&) {
  events.push_back("prepare");
  pipeline::Prepared p;
  KOPT_TRY_ASSIGN(p.source_text, util::read_file(kernel));
  KOPT_TRY_ASSIGN(p.signature, contract::parse_solve_signature(p.source_text, kernel.string()));
  p.kernel = kernel;
  p.golden_dir = run_dir / "golden";
  fs::create_directories(p.golden_dir);
  p.manifest = manifest(dims);
  golden_dims_[p.golden_dir.string()] = dims;
  KOPT_TRY(util::write_json_atomic(p.golden_dir / "manifest.json", "golden_manifest", p.manifest));
  p.tol = {1e-4, 1e-4};
  p.buffer_dtypes = {"float32", "float32"};
  p.build.name = "baseline";
  p.build.status = compile::CompileStatus::kOk;
  p.build.library = run_dir / "build" / "baseline.so";
  libs_[p.build.library.string()] = job_defines;
  write_library(p.build.library, job_defines);
  return p;
}

Result<roofline::Ceilings> ModelLab::ceilings(const device::GpuInfo&) { return o_.ceilings; }

std::vector<compile::CompileResult> ModelLab::compile(const std::vector<compile::CompileRequest>& requests, int,
                                                      const compile::ProgressFn&) {
  std::vector<compile::CompileResult> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& r : requests) {
    compiled.push_back(r.name);
    compile_timeouts_s.push_back(r.timeout_s);
    compile::CompileResult c;
    c.name = r.name;
    Defines d = job_defines;
    for (const auto& [k, v] : r.defines) d[k] = v;
    if (o_.compiles && !o_.compiles(d)) {
      c.status = compile::CompileStatus::kFailed;
      c.log_text = "model: this configuration does not compile";
    } else if (o_.compile_times_out && o_.compile_times_out(d)) {
      c.status = compile::CompileStatus::kTimedOut;
      c.log_text = "model: nvcc timed out";
    } else {
      if (o_.spills && o_.spills(d)) {
        compile::KernelResources k;
        k.name = "_Z5scalePfi";
        k.registers = 255;
        k.spill_store_bytes = 360;
        k.spill_load_bytes = 384;
        c.resources.push_back(k);
      }
      c.status = compile::CompileStatus::kOk;
      c.library = r.out_dir / (r.name + ".so");
      libs_[c.library.string()] = d;
      write_library(c.library, d);
      // The per-shape dispatcher (loop/per_shape_loop.cpp): dispatch.json beside its source says which configuration
      // serves which case; the lab plays its rule (nearest_case) at each run's dims.
      if (auto t = util::read_json(r.source.parent_path() / "dispatch.json"); t && r.source.filename() == "dispatch.cu")
        dispatchers_[c.library.string()] = *t;
    }
    out.push_back(c);
  }
  return out;
}

sass::Analysis ModelLab::analyze_sass(const std::vector<fs::path>& binaries, const std::vector<std::string>& kernels) {
  sass::Analysis a;
  if (!binaries.empty()) a.binary = binaries.front();
  a.wanted = kernels;
  a.tool_error = "model lab: no SASS";
  return a;
}

std::vector<double> ModelLab::samples(const std::string& lib, double true_ms, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    // A deterministic, symmetric noise in [-1, 1) from the library and the sample's number.
    uint64_t h = std::hash<std::string>{}(lib + "#" + std::to_string(calls_[lib]++));
    double u = static_cast<double>(h % 1000003) / 1000003.0 * 2 - 1;
    out.push_back(true_ms * (1 + o_.noise * u));
  }
  return out;
}

std::pair<runner::RunStatus, std::string> ModelLab::wrong_outcome(const Defines& d) const {
  if (o_.unwritten)
    if (auto f = o_.unwritten(d); f && *f > 0) {
      constexpr int64_t kNumel = 1 << 20;
      const auto never = static_cast<int64_t>(std::llround(*f * static_cast<double>(kNumel)));
      return {
          runner::RunStatus::kUnwrittenOutput,
          fmt::format("output y: MISMATCH {}/{} elements; first bad index 0 [0]: got nan; max_abs=0 rel_l2=1; {} elements never "
                      "written (still poisoned)",
                      never, kNumel, never)};
    }
  return {runner::RunStatus::kWrongResult, "output y: model: wrong result"};
}

runner::RunOutcome ModelLab::run(const runner::RunRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  runner::RunRequest req = request;
  for (auto& lib : req.libs) lib = played_library(lib, req.golden_dir);
  run_slots.push_back(req.slot);
  // This run's own noise sequence (noise_per_run): keyed by its result file within the run directory, which no
  // other run of this loop shares and the same run of another loop (another folder, other GPUs) does.
  // The library's path likewise (a candidate's .so lies in the run directory).
  auto within_run = [&](const fs::path& p) {
    const std::string path = p.string();
    const auto at = path.find("/kopt_runs/");
    const auto rel = at == std::string::npos ? std::string::npos : path.find('/', at + 11);
    return o_.noise_per_run && rel != std::string::npos ? path.substr(rel) : path;
  };
  const std::string seq = o_.noise_per_run ? "@" + within_run(req.result_json) : "";
  runs.push_back(std::string(runner::run_mode_name(req.mode)) + (req.race ? " race" : "") +
                 (req.dump_outputs.empty() ? "" : " dump") + (req.ephemeral_fd >= 0 ? " ephemeral" : ""));
  results.push_back(req.result_json);
  events.push_back("run " + req.result_json.filename().string());
  event_cv_.notify_all();
  runner::RunOutcome out;
  out.status = runner::RunStatus::kOk;
  util::Json details = {{"mode", runner::run_mode_name(req.mode)}};
  if (o_.on_run) o_.on_run(req);
  if (util::interrupted()) {  // as the child under Ctrl-C: the run is cut, no verdict
    out.status = runner::RunStatus::kInterrupted;
    out.message = "interrupted";
    return out;
  }
  auto dies_at = [&](const Defines& d) {
    auto g = golden_dims_.find(req.golden_dir.string());
    return o_.worker_dies_at && g != golden_dims_.end() && o_.worker_dies_at(d, req.slot, g->second);
  };
  if ((o_.worker_dies || o_.worker_dies_at) && !req.libs.empty())
    if (auto it = libs_.find(req.libs.back().string());
        it != libs_.end() && ((o_.worker_dies && o_.worker_dies(it->second, req.slot)) || dies_at(it->second))) {
      out.status = runner::RunStatus::kCrashed;
      out.message = "the measuring process was killed by SIGKILL (model: its GPU faulted)";
      return out;  // no result file, no details: the worker was lost
    }
  // Per library: its true time, or nullopt when it computes a wrong answer (as the child's check finds).
  std::vector<std::optional<double>> truth;
  for (const auto& lib : req.libs) {
    auto it = libs_.find(lib.string());
    if (it == libs_.end()) {
      out.status = runner::RunStatus::kLoadError;
      out.message = "model lab: unknown library " + lib.string();
      truth.push_back(std::nullopt);
      continue;
    }
    truth.push_back(this->truth(it->second, req.golden_dir));
    if (!truth.back() && out.status == runner::RunStatus::kOk) {  // the first failing library's status, as the child
      std::tie(out.status, out.message) = wrong_outcome(it->second);
    }
  }
  if (req.ephemeral_fd >= 0 && out.status == runner::RunStatus::kOk && !req.libs.empty() && o_.wrong_on_ephemeral &&
      o_.wrong_on_ephemeral(libs_[req.libs.back().string()])) {  // right on every public and sealed seed, wrong here
    out.status = runner::RunStatus::kWrongOnEphemeralSeed;
    out.message = "on the ephemeral seed: output y: model: wrong result";
  }
  if (req.ephemeral_fd >= 0 && o_.ephemeral_unjudged) {
    details["answer_key"] = {{"judge", false}, {"out_of_reach", false}, {"reason", "no judge process: model"}};
  } else if (req.ephemeral_fd >= 0 &&
             (out.status == runner::RunStatus::kOk || out.status == runner::RunStatus::kWrongOnEphemeralSeed)) {
    const bool ok = out.status == runner::RunStatus::kOk;  // the child's record of the seed its judge served
    details["seeds"] = util::Json::array({{{"seed", runner::kEphemeralSeedId}, {"ephemeral", true}, {"checked_on", "judge"},
                                           {"outputs", {{"y", {{"ok", ok}}}}}}});
    details["answer_key"] = {{"judge", true}, {"ephemeral_seed", true}, {"out_of_reach", true}};
  }
  if (req.mode == runner::RunMode::kCheck && !req.dump_outputs.empty() && !req.libs.empty() && libs_.count(req.libs.front().string())) {
    // Four outputs of 1.0; a nondeterministic configuration's change from call to call.
    const Defines& d = libs_[req.libs.front().string()];
    const float v = o_.nondeterministic && o_.nondeterministic(d) ? 1.0f + 0.5f * static_cast<float>(calls_[req.libs.front().string() + "#dump"]++) : 1.0f;
    contract::Tensor t;
    t.dtype = contract::DType::kF32;
    t.shape = {4};
    t.data.resize(16);
    for (int k = 0; k < 4; ++k) std::memcpy(t.data.data() + 4 * k, &v, 4);
    fs::create_directories(req.dump_outputs.parent_path());
    if (auto st = util::write_file_atomic(req.dump_outputs, contract::serialize_safetensors({{"out.y", t}})); !st) {
      out.status = runner::RunStatus::kInternal;
      out.message = st.error().message;
    }
  }
  if (req.mode != runner::RunMode::kPaired && !truth.empty() && !truth.front() && out.status == runner::RunStatus::kWrongResult) {
    // The child's comparison of a wrong output: the model misses the last element (a tile's tail).
    auto g = golden_dims_.find(req.golden_dir.string());
    const int64_t n = g != golden_dims_.end() && g->second.count("n") ? g->second.at("n") : 1;
    details["seeds"] = util::Json::array({{{"seed", 0},
                                           {"outputs", {{"y", {{"ok", false}, {"first_bad_index", n - 1}, {"first_bad_coords", {n - 1}},
                                                               {"expected_at_first_bad", 2.0}, {"actual_at_first_bad", 0.0}}}}}}});
  }
  if (req.mode == runner::RunMode::kTime && out.status == runner::RunStatus::kOk) {
    out.samples_ms = samples(within_run(req.libs.front()) + seq, *truth.front(), 30);
    out.timing = runner::compute_stats(out.samples_ms);
    details["timing"] = runner::to_json(*out.timing);
    details["samples_ms"] = out.samples_ms;
  }
  if (req.mode == runner::RunMode::kPaired) {
    // Interleaved rounds over the correct libraries; a race stops once the last is ranked against the first.
    std::vector<std::vector<double>> s(req.libs.size());
    int rounds = 0;
    runner::RaceRule rule;
    rule.max_rounds = req.rounds;
    for (; rounds < req.rounds; ++rounds) {
      for (size_t k = 0; k < req.libs.size(); ++k)
        if (truth[k]) s[k].push_back(samples(within_run(req.libs[k]) + seq, *truth[k], 1).front());
      if (req.race && truth.size() >= 2 && truth.front() && truth.back() &&
          runner::race_state(s.front(), s.back(), rule, 0.0) != runner::RaceState::kContinue) {
        ++rounds;
        break;
      }
    }
    util::Json libs = util::Json::array();
    for (size_t k = 0; k < req.libs.size(); ++k) {
      auto wrong = truth[k] ? std::pair<runner::RunStatus, std::string>{runner::RunStatus::kOk, ""}
                            : wrong_outcome(libs_[req.libs[k].string()]);
      libs.push_back({{"lib", req.libs[k].string()},
                      {"status", runner::status_name(wrong.first)},
                      {"message", wrong.second},
                      {"samples_ms", s[k]}});
    }
    details["libs"] = libs;
    details["rounds"] = rounds;
  }
  details["status"] = runner::status_name(out.status);
  details["message"] = out.message;
  out.details = details;
  if (!req.result_json.empty()) {
    fs::create_directories(req.result_json.parent_path());
    if (auto st = util::write_json_atomic(req.result_json, "runner_result", details); !st) {
      out.status = runner::RunStatus::kInternal;
      out.message = st.error().message;
    }
  }
  return out;
}

void ModelLab::write_library(const fs::path& lib, const Defines& d) const {
  // A library file with its defines (the profile cache's key reads its bytes; the dispatch copies it).
  std::error_code ec;
  fs::create_directories(lib.parent_path(), ec);
  (void)util::write_file_atomic(lib, util::Json(d).dump());
}

Result<profile::ProfileResult> ModelLab::profile(const profile::ProfileRequest& req, profile::ProfilePlan& plan, int top_n) {
  ++profile_calls_;
  profiled_after.push_back(runs.size());
  profiled.push_back(req.name);
  profile::ProfileResult r;
  r.plan = plan;
  r.top_n = top_n;
  r.ncu_version = "model";
  for (const auto& [k, v] : o_.metrics) r.aggregate.metrics[k] = {v, "", profile::AggregateMethod::kTimeWeightedMean, 1.0};
  fs::create_directories(req.out_dir);
  // What profile_call leaves: the metrics JSON and the summary.
  r.json_path = profile::metrics_json_path(req.out_dir, req.name);
  r.summary_path = req.out_dir / (req.name + "_summary.txt");
  KOPT_TRY(profile::write_profile_outputs(r));
  return r;
}

fs::path ModelLab::played_library(const fs::path& lib, const fs::path& golden_dir) const {
  auto it = dispatchers_.find(lib.string());
  if (it == dispatchers_.end()) return lib;
  const util::Json& t = it->second;
  std::vector<DispatchCase> cases;
  for (const auto& c : t["cases"]) cases.push_back({c["case"].get<std::string>(), 1, c["point"].get<DimValues>()});
  auto g = golden_dims_.find(golden_dir.string());
  const Dims at = g == golden_dims_.end() ? dims : g->second;
  const size_t i = nearest_case(cases, t["keys"].get<std::vector<std::string>>(), DimValues(at.begin(), at.end()));
  const size_t k = t["cases"][i]["config"].get<size_t>();
  return t["configs"][k]["source_library"].get<std::string>();
}

std::optional<double> ModelLab::truth(const Defines& d, const fs::path& golden_dir) const {
  if (!o_.time_at) return o_.time_ms(d);
  auto it = golden_dims_.find(golden_dir.string());
  return o_.time_at(d, it == golden_dims_.end() ? dims : it->second);
}

util::Json ModelLab::manifest(const Dims& d) const {
  // Two float32 buffers of n elements (x in, y out): the working set is 8 n bytes.
  const double n = d.count("n") ? static_cast<double>(d.at("n")) : 1e6;
  util::Json buffers = util::Json::array();
  for (const char* b : {"x", "y"})
    buffers.push_back({{"name", b}, {"dtype", "float32"}, {"shape", {d.count("n") ? d.at("n") : 1}}, {"shape_expr", {"n"}},
                       {"role", std::string(b) == "x" ? "input" : "output"}});
  util::Json m = {{"dims", d}, {"buffers", buffers}};
  // The harness lists each seed's file with its sha256 (contract::golden_identity reads them): here, of the dims.
  m["files"] = {{{"seed", 0}, {"file", "seed0.safetensors"}, {"sha256", util::Json(d).dump()}}};
  if (!o_.no_workload_model) m["workload_model"] = {{"flops", n}, {"bytes_min", 8 * n}};
  if (!o_.no_workload_model && !o_.workload_dtype.empty()) m["workload_model"]["dtype"] = o_.workload_dtype;
  return m;
}

Result<util::Json> ModelLab::golden(const GoldenWant& want) {
  const Dims& d = want.dims;
  const fs::path& out_dir = want.dir;
  std::lock_guard<std::mutex> lock(mu_);  // the baseline's sanitizer makes its small case beside the cases' checks
  goldens.push_back(d);
  golden_seeds.push_back(want.seeds);
  events.push_back("golden");
  if (o_.on_golden) o_.on_golden(d);
  if (util::interrupted()) return input_error("the golden-data harness failed (interrupted)");  // as the real one says
  if (o_.golden_oom && o_.golden_oom(d)) return input_error("ref.py failed: torch.OutOfMemoryError: CUDA out of memory");
  fs::create_directories(out_dir);
  util::Json m = manifest(d);
  KOPT_TRY(util::write_json_atomic(out_dir / "manifest.json", "golden_manifest", m));
  golden_dims_[out_dir.string()] = d;
  return m;
}

namespace {
// compute-sanitizer as the model lab plays it: each tool's captured report for the library in the target argv.
class ModelSanitizer final : public util::CommandRunner {
 public:
  using Output = std::function<std::optional<std::pair<std::string, int>>(const std::string& lib, sanitize::Tool)>;
  explicit ModelSanitizer(Output out) : out_(std::move(out)) {}
  util::ProcessResult run(const util::ProcessSpec& spec) override {
    std::string lib, tool;
    for (size_t i = 0; i + 1 < spec.argv.size(); ++i) {
      if (spec.argv[i] == "--lib" && lib.empty()) lib = spec.argv[i + 1];
      if (spec.argv[i] == "--tool") tool = spec.argv[i + 1];
    }
    util::ProcessResult r;
    r.started = true;
    r.exit_code = 0;
    const auto t = sanitize::parse_tool(tool).value_or(sanitize::Tool::kMemcheck);
    auto o = out_(lib, t);
    if (o) {
      r.stdout_text = o->first;
      r.exit_code = o->second;
    } else {
      r.stdout_text = t == sanitize::Tool::kRacecheck
                          ? "========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
                          : "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n";
    }
    return r;
  }

 private:
  Output out_;
};
}  // namespace

sanitize::Verdict ModelLab::sanitize(const sanitize::Request& request) {
  {
    std::unique_lock<std::mutex> wait(mu_);
    if (sanitize_calls_ < o_.sanitizer_waits_for.size()) {
      const std::string& e = o_.sanitizer_waits_for[sanitize_calls_];
      sanitizer_saw.push_back(event_cv_.wait_for(wait, std::chrono::seconds(10),
                                                 [&] { return std::find(events.begin(), events.end(), e) != events.end(); }));
    }
    ++sanitize_calls_;
  }
  std::lock_guard<std::mutex> lock(mu_);  // beside the cases' checks (Optimizer::start_baseline_sanitizer)
  sanitize::Request req = request;
  if (req.sanitizer.empty()) req.sanitizer = "compute-sanitizer";
  for (size_t i = 0; i + 1 < req.target_argv.size(); ++i)
    if (req.target_argv[i] == "--lib") {
      sanitized.push_back(req.target_argv[i + 1]);
      break;
    }
  events.push_back("sanitize");
  ModelSanitizer runner([this](const std::string& lib, sanitize::Tool t) -> std::optional<std::pair<std::string, int>> {
    auto it = libs_.find(lib);
    if (!o_.sanitizer_output || it == libs_.end()) return std::nullopt;
    return o_.sanitizer_output(it->second, t);
  });
  if (!o_.smem_fill_status || req.fill_argv.empty()) {
    req.fill_argv.clear();
    return sanitize::run_gate(req, runner);
  }
  // The fill pass's child is played by writing its result file before the gate reads it.
  std::string lib;
  for (size_t i = 0; i + 1 < req.fill_argv.size(); ++i)
    if (req.fill_argv[i] == "--lib") lib = req.fill_argv[i + 1];
  auto it = libs_.find(lib);
  const std::string status = it == libs_.end() ? "ok" : o_.smem_fill_status(it->second);
  auto fill_argv = std::move(req.fill_argv);
  req.fill_argv.clear();
  sanitize::Verdict v = sanitize::run_gate(req, runner);
  util::Json result = {{"status", status}, {"message", status == "ok" ? "" : "output y: MISMATCH 1/4096 elements; got nan"}};
  util::ProcessResult proc;
  proc.started = true;
  proc.exit_code = 0;
  sanitize::add_fill(v, sanitize::interpret_fill(proc, result));
  return v;
}

Result<contract::EphemeralSeedPtr> ModelLab::ephemeral_seed(const Dims& at) {
  std::lock_guard<std::mutex> lock(mu_);
  ephemeral_seeds.push_back(at);
  events.push_back("ephemeral_seed");
  if (!o_.wrong_on_ephemeral) return input_error("model lab: no ephemeral seed");
  KOPT_TRY_ASSIGN(util::Fd fd, util::make_memfd("kopt-model-ephemeral"));
  const char bytes[] = "model";
  if (::write(fd.get(), bytes, sizeof bytes) != static_cast<ssize_t>(sizeof bytes) ||
      ::fcntl(fd.get(), F_ADD_SEALS, util::kFrozenSeals) != 0)
    return internal_error("model lab: the ephemeral seed's memfd");
  return contract::EphemeralSeed::adopt(std::move(fd), {{"status", "ok"}, {"backend", "model"}});
}

}  // namespace kopt::loop
