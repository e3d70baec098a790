#include "pipeline/contract_check.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>

#include "compile/cutlass.h"
#include "contract/golden_cache.h"
#include "contract/golden_maker.h"
#include "pipeline/triton.h"
#include "search/annotations.h"
#include "search/registry.h"
#include "search/space.h"
#include "search/source_scan.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::pipeline {

namespace fs = std::filesystem;

namespace {

// A scratch folder for signature.json, removed when the check ends.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            fmt::format("kopt-check-{}-{}", static_cast<long>(::getpid()), counter.fetch_add(1));
    std::error_code ec;
    fs::create_directories(path_, ec);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

std::vector<std::string> check_argv(const KernelJob& job, const std::string& signature_json, ReferenceRun run) {
  util::Json dims = util::Json::object();
  for (const auto& [k, v] : job.dims) dims[k] = v;
  std::vector<std::string> argv = {"check", "--ref", fs::absolute(job.ref).string()};
  if (is_triton_kernel(job.kernel)) {
    argv.insert(argv.end(), {"--triton-kernel", fs::absolute(job.kernel).string()});
  } else {
    argv.insert(argv.end(), {"--signature", signature_json});
    if (job.ptr_size > 0) argv.insert(argv.end(), {"--ptr-size", std::to_string(job.ptr_size)});
  }
  argv.insert(argv.end(), {"--dims", dims.dump()});
  if (run == ReferenceRun::kOnCpu) argv.push_back("--run");
  return argv;
}

// The annotations' methods against the registry, as optimize's search space takes them (issue 37: `check` was looser
// than `optimize`): an unknown id (with a suggestion) or a method for another backend is an input error in every
// command. A registry that cannot be loaded is left to the commands that search.
Status check_annotated_methods(const search::Annotations& ann, search::Backend backend, const std::string& arch) {
  if (ann.methods.empty()) return ok_status();
  auto reg = search::registry();
  if (!reg) return ok_status();
  search::SpaceOptions opts;
  opts.backend = backend;
  opts.arch = parse_arch_number(arch).value_or(90);
  auto space = search::build_space(ann, reg.value().get(), opts);
  if (!space) return space.error();
  return ok_status();
}

bool golden_cached(const KernelJob& job, const contract::KernelSignature& sig, const fs::path& signature_json) {
  auto cache = contract::golden_cache_from_env();
  if (!cache || !*cache || is_triton_kernel(job.kernel)) return false;
  contract::GoldenRequest g;
  g.ref_py = job.ref;
  g.signature = sig;
  g.dims = job.dims;
  g.seeds = job.seeds;
  g.ptr_size = job.ptr_size;
  g.out_dir = signature_json.parent_path();  // harness_argv names out_dir/signature.json; the key reads its content
  if (signature_json.filename() != "signature.json") return false;
  for (bool timed : {true, false}) {
    g.time_reference = timed;
    auto key = contract::golden_key(contract::harness_argv(g, "python3"));
    if (!key) continue;
    if (auto hit = contract::find_golden(**cache, *key); hit && contract::golden_entry_usable(*hit)) return true;
  }
  return false;
}

Result<ContractCheck> check_contract(const KernelJob& job, util::CommandRunner& runner, ReferenceRun run) {
  KOPT_TRY(validate(job));
  ContractCheck c;
  KOPT_TRY_ASSIGN(std::string text, util::read_file(job.kernel));
  ScratchDir scratch;
  const fs::path sig_path = scratch.path() / "signature.json";
  if (is_triton_kernel(job.kernel)) {
    c.backend = search::Backend::kTriton;
    KOPT_TRY_ASSIGN(search::Annotations ann, read_triton_kernel(text, job.kernel.string()));
    c.annotated_params = ann.params.size();
    c.annotated_methods = ann.methods.size();
    KOPT_TRY(check_annotated_methods(ann, c.backend, job.arch));
    c.entry = search::extract_entry_signature(text, search::SourceLanguage::kPython).value_or("setup(...)");
  } else {
    c.backend = job.cutlass || compile::is_cutlass_source(job.kernel) ? search::Backend::kCutlass : search::Backend::kCuda;
    KOPT_TRY_ASSIGN(contract::KernelSignature sig, contract::parse_solve_signature(text, job.kernel.string()));
    c.entry = sig.normalised;
    KOPT_TRY_ASSIGN(search::Annotations ann, search::parse_annotations(text, job.kernel.string()));
    c.annotated_params = ann.params.size();
    c.annotated_methods = ann.methods.size();
    KOPT_TRY(check_annotated_methods(ann, c.backend, job.arch));
    KOPT_TRY(util::write_json_atomic(sig_path, "signature", {{"signature", contract::to_json(sig)}}));
    if (run == ReferenceRun::kStaticUnlessCached && golden_cached(job, sig, sig_path)) {
      c.harness_skipped = true;
      c.harness = {{"status", "skipped"}, {"reason", "the golden-data cache holds this ref.py's data at these dims"}};
      return c;
    }
  }
  const double timeout_s = run == ReferenceRun::kOnCpu ? 900 : 120;
  KOPT_TRY_ASSIGN(util::ProcessSpec spec, contract::harness_process(check_argv(job, sig_path.string(), run), timeout_s));
  auto r = runner.run(spec);
  if (r.interrupted) return Error{ExitCode::kInterrupted, "interrupted while checking ref.py"};
  if (r.timed_out)
    return input_error(fmt::format("checking {} took longer than {:.0f} s", job.ref.string(), timeout_s));
  if (!r.success()) {
    std::string err = util::trim(r.stderr_text);
    // The dimensions given do not fit the kernel (a value out of a scalar's range): the command line's fault.
    if (const std::string dim = "kopt_harness: dimension error: "; r.exit_code == 4 && util::starts_with(err, dim))
      return input_error(err.substr(dim.size()));
    // The harness's own prefix is noise inside kopt's message.
    for (const std::string prefix : {"kopt_harness: error: ", "kopt_harness: "})
      if (util::starts_with(err, prefix)) {
        err = err.substr(prefix.size());
        break;
      }
    if (r.exit_code == 4) return input_error(job.ref.string() + " does not meet the contract (docs/CONTRACT.md):\n" + err);
    return internal_error("the harness's contract check failed (" + r.describe() + "):\n" + err);
  }
  std::string out = util::trim(r.stdout_text);
  auto nl = out.rfind('\n');
  try {
    c.harness = util::Json::parse(nl == std::string::npos ? out : out.substr(nl + 1));
  } catch (const std::exception& e) {
    return internal_error(std::string("the harness's contract check printed no JSON line: ") + e.what());
  }
  if (c.harness.value("status", std::string()) == "module_missing") {
    std::string module = c.harness.value("module", std::string("?"));
    std::string why = fmt::format("{} imports {}, which {} cannot import here ({}): install it ({}), or check on a machine "
                                  "that has it", job.ref.string(), module, spec.argv.front(),
                                  c.harness.value("reason", std::string()),
                                  module == "torch" ? "pip install torch; the CPU build is enough" : "pip install " + module);
    if (run == ReferenceRun::kOnCpu) return gate_error(why);
    c.harness["warnings"] = util::Json::array({why + "; ref.py itself is checked when the golden data is made"});
  }
  return c;
}

std::string format_contract_report(const KernelJob& job, const ContractCheck& c) {
  const util::Json& h = c.harness;
  std::string s = fmt::format("contract OK: {} [{}]\n", job.kernel.string(), format_dims(job.dims));
  s += fmt::format("  kernel     {} ({})\n", c.entry, search::backend_name(c.backend));
  s += fmt::format("  annotations {} param(s), {} method(s)\n", c.annotated_params, c.annotated_methods);
  if (h.value("status", std::string()) == "module_missing")
    s += fmt::format("  ref.py     {}: not imported here (see the warning)\n", job.ref.string());
  else
    s += fmt::format("  ref.py     {}: imports, defines reference(), every name it needs is given\n", job.ref.string());
  std::string ref = h.value("reference", std::string("not run"));
  if (ref == "ran") {
    std::vector<std::string> bufs;
    for (const auto& b : h.value("buffers", util::Json::array())) bufs.push_back(b.get<std::string>());
    // Where the given dims would not fit the CPU check's memory, the harness ran it at scaled dims (docs/CONTRACT.md).
    std::string at;
    if (h.contains("scaled_dims") && h["scaled_dims"].is_object()) {
      std::vector<std::string> scaled;
      for (const auto& [k, v] : h["scaled_dims"].items()) scaled.push_back(fmt::format("{}={}", k, v.dump()));
      const auto gb = [](const util::Json& b) { return b.is_number() ? b.get<double>() / (1ull << 30) : 0.0; };
      at = fmt::format(" at scaled dims {} (the given dims need {:.1f} GB; kopt check lets it use {:.1f} GB, "
                       "KOPT_CHECK_MAX_GB sets it)", util::join(scaled, " "), gb(h.value("given_bytes", util::Json())),
                       gb(h.value("limit_bytes", util::Json())));
      if (h.value("given_bytes", util::Json()).is_null())
        at = fmt::format(" at scaled dims {} (the given dims ran out of the {:.1f} GB kopt check lets it use, "
                         "KOPT_CHECK_MAX_GB sets it)", util::join(scaled, " "), gb(h.value("limit_bytes", util::Json())));
    }
    s += fmt::format("  reference  ran once on the CPU{} ({}; buffers {}) in {:.2f} s{}\n", at, h.value("backend", std::string("?")),
                     util::join(bufs, ", "), h.value("elapsed_s", 0.0),
                     h.value("sizes_guessed", false) ? "; buffer sizes were guessed (no setup() or shapes)" : "");
  } else if (ref == "skipped") {
    s += fmt::format("  reference  not run on this machine: {}\n", h.value("reason", std::string("?")));
  } else {
    s += "  reference  not run (static check)\n";
  }
  for (const auto& w : h.value("warnings", util::Json::array())) s += "  warning    " + w.get<std::string>() + "\n";
  return s;
}

}  // namespace kopt::pipeline
