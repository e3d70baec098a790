#include "pipeline/triton.h"

#include <charconv>

#include "contract/golden_maker.h"
#include "search/method.h"
#include "search/source_scan.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/progress.h"

namespace kopt::pipeline {

namespace fs = std::filesystem;

bool is_triton_kernel(const fs::path& kernel) { return kernel.extension() == ".py"; }

util::Json triton_config(const search::Candidate& c) {
  util::Json j = util::Json::object();
  for (const auto& [k, v] : c.constexprs) j[k] = v;
  for (const auto& [k, v] : c.launch) j[k] = v;
  return j;
}

Result<util::Json> triton_baseline_config(const search::Annotations& ann,
                                          const std::map<std::string, std::string>& overrides) {
  util::Json j = util::Json::object();
  for (const auto& p : ann.params) {
    std::string key = p.kind == search::ParamKind::kNumWarps    ? "num_warps"
                      : p.kind == search::ParamKind::kNumStages ? "num_stages"
                                                                : p.name;
    j[key] = p.default_value;
  }
  for (const auto& m : ann.methods) j[m.guard] = 0;
  for (const auto& [name, text] : overrides) {
    int64_t v = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc() || ptr != end)
      return input_error("-D " + name + "=" + text + ": for a Triton kernel -D sets a run_kernel argument, "
                         "which must be an integer (e.g. -D BLOCK_SIZE=1024)");
    j[name] = v;
  }
  return j;
}

Result<search::Annotations> read_triton_kernel(const std::string& text, const std::string& file_name) {
  auto sig = search::extract_entry_signature(text, search::SourceLanguage::kPython);
  if (!sig)
    return input_error(file_name + " defines no run_kernel(...): a Triton kernel file exposes setup(*, seed, **dims) "
                       "and run_kernel(**inputs, **config) (docs/TRITON.md)");
  if (sig->rfind("setup(", 0) != 0)
    return input_error(file_name + " defines no setup(...): it must return {\"inputs\": {...}, \"outputs\": [...]} "
                       "for kopt to make the kernel's buffers (docs/TRITON.md)");
  return search::parse_annotations(text, file_name);
}

Result<Prepared> prepare_triton(const KernelJob& job, const fs::path& work_dir, util::CommandRunner& runner,
                                bool time_reference, const Say& say, bool want_ephemeral) {
  Prepared p;
  p.backend = search::Backend::kTriton;
  p.kernel = job.kernel;
  KOPT_TRY_ASSIGN(p.source_text, util::read_file(job.kernel));
  KOPT_TRY_ASSIGN(search::Annotations ann, read_triton_kernel(p.source_text, job.kernel.string()));
  KOPT_TRY_ASSIGN(p.triton_config, triton_baseline_config(ann, job.defines));
  std::string entry = *search::extract_entry_signature(p.source_text, search::SourceLanguage::kPython);
  say("contract: " + entry + " (Triton; baseline configuration " + p.triton_config.dump() + ")");
  contract::GoldenRequest g;
  g.ref_py = job.ref;
  g.triton_kernel = golden_source(job);
  g.dims = job.dims;
  g.seeds = job.seeds;
  g.out_dir = work_dir / "golden";
  g.time_reference = time_reference;
  KOPT_TRY_ASSIGN(g.cache, contract::golden_cache_from_env());
  {
    util::Progress progress("  golden data: kernel.py's setup() and ref.py for " + std::to_string(job.seeds) + " seed(s)");
    if (want_ephemeral) make_with_ephemeral(g, work_dir / "golden_stream.log", p);
    KOPT_TRY_ASSIGN(p.manifest, contract::make_golden(g, runner));
  }
  say_golden_cache(p.manifest, say);
  p.golden_dir = g.out_dir;
  KOPT_TRY_ASSIGN(p.signature, contract::signature_from_json(p.manifest));
  p.signature.normalised = entry;
  p.sizes_guessed = false;
  p.tol = resolve_tolerance(p.manifest, job.numerics, job.atol, job.rtol, &p.tol_source);
  for (const auto& b : p.manifest.value("buffers", util::Json::array())) p.buffer_dtypes.push_back(b.value("dtype", ""));
  return p;
}

void bind_kernel(runner::RunRequest& req, const Prepared& p) {
  if (p.backend == search::Backend::kTriton) {
    req.libs.clear();
    req.triton_kernel = p.kernel;
    req.triton_configs = {p.triton_config};
  } else {
    req.libs = {p.build.library};
  }
}

runner::RunRequest timing_request(const KernelJob& job, const Prepared& p, const fs::path& result_json, double max_time_s) {
  runner::RunRequest req;
  bind_kernel(req, p);
  req.golden_dir = p.golden_dir;
  req.result_json = result_json;
  req.mode = runner::RunMode::kTime;
  req.tol = p.tol;
  req.timeout_s = job.run_timeout_s + 2 * max_time_s;
  req.max_time_s = max_time_s;
  return req;
}

fs::path keep_triton_preload(const util::Json& result, const fs::path& dir) {
  const auto it = result.find("installed_imports");
  if (it == result.end() || !it->is_array() || it->empty()) return {};
  std::string text;
  for (const auto& n : *it)
    if (n.is_string() && !n.get<std::string>().empty() && n.get<std::string>().find('\n') == std::string::npos)
      text += n.get<std::string>() + "\n";
  if (text.empty()) return {};
  const fs::path file = dir / (util::content_hash(text) + ".txt");
  std::error_code ec;
  if (fs::exists(file, ec)) return file;
  fs::create_directories(dir, ec);
  if (!util::write_file_atomic(file, text)) return {};
  return file;
}

std::vector<fs::path> triton_cubins(const util::Json& result) {
  std::vector<fs::path> out;
  if (!result.is_object() || !result.contains("cubins") || !result["cubins"].is_array()) return out;
  for (const auto& c : result["cubins"])
    if (c.is_object() && c.contains("file") && c["file"].is_string()) out.emplace_back(c["file"].get<std::string>());
  return out;
}

}  // namespace kopt::pipeline
