// The measuring child through the lab: run requests (a race's first library checked once), paired comparisons, a
// candidate's compile request and the SASS check of its binaries.
#include "compile/command.h"
#include "dispatch/dispatcher.h"
#include "loop/candidate_check.h"
#include "loop/optimizer.h"
#include "pipeline/triton.h"
#include "sass/mix.h"
#include "search/registry.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

runner::RunOutcome Optimizer::run(const std::vector<fs::path>& libs, const std::vector<const search::Candidate*>& cands,
                                  const fs::path& result, runner::RunMode mode, const fs::path& dump_cubins, bool race,
                                  const fs::path& golden) {
  runner::RunRequest req = request(libs, cands, result, mode, dump_cubins, race, golden);
  auto key = [&](const fs::path& lib) { return lib.string() + "|" + req.golden_dir.string(); };
  if (req.mode == runner::RunMode::kPaired && req.libs.size() >= 2) {
    std::lock_guard<std::mutex> lock(checked_mu_);
    req.checked_first = checked_.count(key(req.libs.front())) > 0;
  }
  auto out = lab_.run(req);
  // What passed its check here is not checked again as a race's first library (the champion).
  std::vector<fs::path> passed;
  if (out.status == runner::RunStatus::kOk && (req.mode == runner::RunMode::kCheck || req.mode == runner::RunMode::kTime) && !req.libs.empty())
    passed.push_back(req.libs.front());
  if (req.mode == runner::RunMode::kPaired && out.details.contains("libs") && out.details["libs"].is_array())
    for (size_t k = 0; k < req.libs.size() && k < out.details["libs"].size(); ++k)
      if (runner::parse_status(out.details["libs"][k].value("status", std::string())) == runner::RunStatus::kOk)
        passed.push_back(req.libs[k]);
  if (!passed.empty()) {
    std::lock_guard<std::mutex> lock(checked_mu_);
    for (const auto& l : passed) checked_.insert(key(l));
  }
  return out;
}

// The key of a run's evidence in the evidence cache: the codes' identities, the golden data's, the measuring child
// (its executable's size and time, its arguments with the run folder's paths made relative and the libraries' paths
// left to the codes), kopt's KOPT_* environment, the GPU's model and the driver. Empty: no key.
std::string Optimizer::evidence_run_key(const runner::RunRequest& request, const std::vector<std::string>& codes,
                                        const std::string& golden) const {
  const auto argv = runner::child_argv(request);
  if (argv.empty() || golden.empty() || gpu_.name.empty()) return "";
  for (const auto& c : codes)
    if (c.empty()) return "";
  const std::string exe = util::file_stamp(argv.front());
  if (exe.empty()) return "";
  util::Hasher h;
  h.add("kopt-evidence-run-1").add(golden).add(exe).add(gpu_.name).add(util::meta_info().driver);
  for (const auto& c : codes) h.add(c);
  const std::string run = dir_.string();
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i - 1] == "--lib") continue;  // the code's identity stands for its path
    h.add(argv[i].starts_with(run) ? "<run>" + argv[i].substr(run.size()) : argv[i]);
  }
  for (const auto& v : util::kopt_environment()) h.add(v);
  return h.hex();
}

runner::RunRequest Optimizer::request(const std::vector<fs::path>& libs, const std::vector<const search::Candidate*>& cands,
                                      const fs::path& result, runner::RunMode mode, const fs::path& dump_cubins, bool race,
                                      const fs::path& golden) const {
  runner::RunRequest r;
  if (triton()) {
    r.triton_kernel = prep_.kernel;
    for (const auto* c : cands) r.triton_configs.push_back(c ? pipeline::triton_config(*c) : prep_.triton_config);
    r.dump_cubin_dir = dump_cubins;
    if (!triton_preload_.empty()) r.env[pipeline::kTritonPreloadEnv] = triton_preload_.string();
  } else {
    r.libs = libs;
  }
  r.golden_dir = golden.empty() ? prep_.golden_dir : golden;
  r.result_json = result;
  r.mode = mode;
  r.tol = prep_.tol;
  r.max_time_s = o_.max_time_s;
  if (target_ci_ > 0) r.target_ci = target_ci_;
  r.rounds = o_.paired_rounds;
  r.race = race;
  r.timeout_s = o_.job.run_timeout_s + 4 * o_.max_time_s;
  r.slot = dispatch::current_slot();  // measuring on several GPUs: the slot this candidate's job runs on
  return r;
}

std::optional<runner::PairedComparison> Optimizer::paired(const fs::path& inc, const search::Candidate& inc_c,
                                                          const fs::path& cand, const search::Candidate& cand_c, const fs::path& out,
                                                          const fs::path& golden) {
  auto r = run({inc, cand}, {&inc_c, &cand_c}, out, runner::RunMode::kPaired, {}, !triton(), golden);
  if (r.status != runner::RunStatus::kOk || !r.details.contains("libs") || r.details["libs"].size() != 2) return std::nullopt;
  auto a = r.details["libs"][0]["samples_ms"].get<std::vector<double>>();
  auto b = r.details["libs"][1]["samples_ms"].get<std::vector<double>>();
  return runner::compare_paired(a, b);
}

compile::CompileRequest Optimizer::request_for(const search::Candidate& c, const fs::path& out_dir) const {
  return candidate_compile_request(o_.job, c, out_dir);
}

util::Json Optimizer::sass_check(const std::vector<fs::path>& binaries, const search::Candidate& c) {
  util::Json out = util::Json::object();
  // CUDA: the kernels defined in the candidate's source; Triton: every function of the cubins it compiled.
  auto analysis = lab_.analyze_sass(binaries, triton() ? std::vector<std::string>{}
                                                       : sass::kernel_names_from_source(c.source, o_.job.cutlass));
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

}  // namespace kopt::loop
