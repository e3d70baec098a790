#include "pipeline/prepare.h"

#include <ctime>
#include <set>

#include "compile/cutlass.h"
#include "compile/pool.h"
#include "contract/golden_maker.h"
#include "contract/golden_stream.h"
#include "pipeline/triton.h"
#include "toolchain/cutlass.h"
#include <cmath>
#include "util/fs.h"
#include "util/input_file.h"
#include "util/laps.h"
#include "util/progress.h"

namespace kopt::pipeline {

namespace fs = std::filesystem;

std::optional<int> parse_arch_number(const std::string& arch) {
  // The architectures CUDA 13's nvcc compiles for, with an optional a (arch-specific) or f (family) suffix.
  static const std::set<int> known = {75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121};
  if (arch.rfind("sm_", 0) != 0) return std::nullopt;
  std::string digits = arch.substr(3);
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.pop_back();
  if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const int n = std::stoi(digits);
  if (!known.count(n)) return std::nullopt;
  return n;
}

Status validate(const KernelJob& job) {
  if (job.kernel.empty()) return input_error("no kernel given: kopt <command> KERNEL.cu --ref ref.py --DIM=...");
  KOPT_TRY(util::require_regular_file(job.kernel, "kernel file"));
  auto ext = job.kernel.extension().string();
  if (ext != ".cu" && ext != ".cuh" && ext != ".cpp" && ext != ".py")
    return input_error(job.kernel.string() + ": a kernel is a .cu file exposing extern \"C\" void solve(...) or a Triton .py "
                       "exposing setup() and run_kernel()");
  if (job.ref.empty()) return input_error("no reference given: add --ref ref.py");
  KOPT_TRY(util::require_regular_file(job.ref, "reference file"));
  if (job.ref.extension() != ".py") return input_error(job.ref.string() + ": the reference must be a Python file (ref.py)");
  if (job.seeds < 1 || job.seeds > 64) return input_error("--seeds must be between 1 and 64");
  if (job.atol && (*job.atol < 0 || !std::isfinite(*job.atol))) return input_error("--atol must be a non-negative number");
  if (job.rtol && (*job.rtol < 0 || !std::isfinite(*job.rtol))) return input_error("--rtol must be a non-negative number");
  if (!parse_arch_number(job.arch))
    return input_error("--arch " + job.arch + ": not a GPU architecture nvcc 13 compiles for; give one such as sm_90 or "
                       "sm_90a (sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_103, sm_110, sm_120, sm_121)");
  if (job.run_timeout_s <= 0) return input_error("--run-timeout-s must be positive");
  return ok_status();
}

runner::Tolerance resolve_tolerance(const util::Json& m, NumericsMode mode, std::optional<double> atol,
                                    std::optional<double> rtol, std::string* source) {
  const auto& t = m.contains("tolerances") ? m["tolerances"] : util::Json::object();
  runner::Tolerance tol{t.value("atol", 1e-4), t.value("rtol", 1e-4)};
  std::string src = t.value("source", std::string("default"));
  if (mode == NumericsMode::kApproximate) {
    tol = {t.value("approx_atol", tol.atol * 10), t.value("approx_rtol", tol.rtol * 10)};
    src = "approximate (" + src + ")";
  }
  if (atol) tol.atol = *atol;
  if (rtol) tol.rtol = *rtol;
  if (atol || rtol) src = "command line";
  if (source) *source = src;
  return tol;
}

KernelJob with_instrumented_copy(KernelJob job, const fs::path& copy) {
  if (!is_triton_kernel(job.kernel)) job.include_dirs.push_back(fs::absolute(job.kernel).parent_path().string());
  else if (job.golden_kernel.empty())
    job.golden_kernel = job.kernel;
  job.kernel = copy;
  return job;
}

const fs::path& golden_source(const KernelJob& job) { return job.golden_kernel.empty() ? job.kernel : job.golden_kernel; }

compile::CompileRequest compile_request(const KernelJob& job, const std::string& name, const fs::path& source,
                                        const fs::path& out_dir) {
  compile::CompileRequest r;
  r.name = name;
  r.source = source;
  r.extra_flags = job.nvcc_flags;
  r.defines = job.defines;
  r.arch = job.arch;
  r.include_dirs = job.include_dirs;
  r.out_dir = out_dir;
  if (job.compile_timeout_s > 0) r.timeout_s = job.compile_timeout_s;
  compile::configure_cutlass(r, job.cutlass);  // CUTLASS sources: headers, flags, sm_90a, 4 GiB per nvcc
  return r;
}

namespace {
// When this process started (its first static initialisation): golden data the cache holds from after it was made by
// this very run (its early harness, or bench's harness kept open for the ephemeral seed), not found from before.
const std::time_t g_process_start = std::time(nullptr);
}  // namespace

bool made_by_this_process(const std::string& made_utc) {
  std::tm tm{};
  const char* end = ::strptime(made_utc.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!end || *end != '\0') return false;
  return ::timegm(&tm) >= g_process_start - 1;  // the stamp has whole seconds
}

void say_golden_cache(const util::Json& manifest, const Say& say) {
  if (!say) return;
  auto made = contract::golden_cache_hit(manifest);
  if (!made) return;
  const std::string entry = manifest["golden_cache"].value("entry", std::string());
  if (made_by_this_process(*made))
    say("golden data: made by this run's harness at " + *made + ", kept in the cache (" + entry + ")");
  else
    say("golden data: from the cache (made " + *made + ", " + entry + "; KOPT_GOLDEN_CACHE=off makes it afresh)");
}

Result<compile::CompileResult> compile_kernel(const KernelJob& job, const compile::CompileRequest& req,
                                             util::CommandRunner& runner) {
  compile::CompileResult r = compile::compile_batch({req}, {1, ""}, runner).front();
  if (r.status == compile::CompileStatus::kToolMissing) return gate_error("nvcc not found: " + r.log_text);
  if (!r.ok()) {
    std::string log = r.log_text;
    if (log.size() > 4000) log = log.substr(0, 4000) + "\n...";
    return input_error(job.kernel.string() + " does not compile (" + std::string(compile::to_string(r.status)) + "):\n" + log);
  }
  return r;
}

void make_with_ephemeral(const contract::GoldenRequest& g, const fs::path& log, Prepared& p) {
  if (!g.cache) {
    p.ephemeral_reason = "no golden cache (KOPT_GOLDEN_CACHE=off): no harness kept open for it";
    return;
  }
  if (contract::golden_batch({g}).todo.empty()) {
    p.ephemeral_reason = "the golden data came from the cache: no harness ran for this call";
    return;
  }
  auto s = contract::GoldenStream::start(log);
  if (!s) {
    p.ephemeral_reason = "the golden-data harness did not start: " + s.error().message;
    return;
  }
  if ((*s)->prefetch({g}) == 1) {
    auto e = (*s)->make_ephemeral(g);
    if (e)
      p.ephemeral = *e;
    else
      p.ephemeral_reason = e.error().message;
  } else {
    p.ephemeral_reason = "the golden-data harness did not make the golden data";
  }
  (*s)->close();
}

Result<Prepared> prepare(const KernelJob& job, const fs::path& work_dir, util::CommandRunner& runner, bool time_reference,
                         const Say& say, bool want_ephemeral, const compile::CompileResult* early_build) {
  KOPT_TRY(validate(job));
  if (is_triton_kernel(job.kernel))  // pipeline/triton.h
    return prepare_triton(job, work_dir, runner, time_reference, say, want_ephemeral);
  Prepared p;
  p.kernel = job.kernel;
  KOPT_TRY_ASSIGN(p.source_text, util::read_file(job.kernel));
  KOPT_TRY_ASSIGN(p.signature, contract::parse_solve_signature(p.source_text, job.kernel.string()));
  say("contract: " + p.signature.normalised);
  // Compile first: it is quick to fail and needs no Python.
  auto req = compile_request(job, "kernel", job.kernel, work_dir / "build");
  if (req.cutlass) {
    std::string inc = toolchain::cutlass_include_among(req.include_dirs);
    say("CUTLASS kernel: " + req.arch + ", headers " + (inc.empty() ? "not found" : inc));
  }
  util::Laps lap(p.phase_seconds);
  {
    util::Progress progress("  compiling " + job.kernel.filename().string());
    KOPT_TRY_ASSIGN(p.build, compile_kernel(job, req, runner));
  }
  lap("compile");
  const bool built_early = early_build && early_build->ok() && !early_build->cache_hit && p.build.cache_hit &&
                           early_build->cache_key == p.build.cache_key;
  if (built_early) {
    p.build.cache_hit = false;
    p.build.compile_ms = early_build->compile_ms;
  }
  say(std::string("compiled: ") + (p.build.cache_hit ? "cache hit" : "built") + " in " +
      std::to_string(static_cast<int>(p.build.compile_ms)) + " ms" + (built_early ? " (beside the hardware gate)" : ""));
  contract::GoldenRequest g;
  g.ref_py = job.ref;
  g.signature = p.signature;
  g.dims = job.dims;
  g.seeds = job.seeds;
  g.out_dir = work_dir / "golden";
  g.ptr_size = job.ptr_size;
  g.time_reference = time_reference;
  KOPT_TRY_ASSIGN(g.cache, contract::golden_cache_from_env());
  {
    util::Progress progress("  golden data: ref.py for " + std::to_string(job.seeds) + " seed(s)" +
                            (time_reference ? ", then timing it" : ""));
    if (want_ephemeral) make_with_ephemeral(g, work_dir / "golden_stream.log", p);
    KOPT_TRY_ASSIGN(p.manifest, contract::make_golden(g, runner));
  }
  lap("golden");
  say_golden_cache(p.manifest, say);
  p.golden_dir = g.out_dir;
  p.sizes_guessed = p.manifest.value("sizes_guessed", false);
  p.tol = resolve_tolerance(p.manifest, job.numerics, job.atol, job.rtol, &p.tol_source);
  for (const auto& b : p.manifest.value("buffers", util::Json::array())) p.buffer_dtypes.push_back(b.value("dtype", ""));
  return p;
}

Result<fs::path> make_run_dir(const fs::path& out, const std::string& prefix) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", &tm);
  fs::path base = out / "kopt_runs" / (prefix + "_" + stamp);
  fs::path dir = base;
  std::error_code ec;
  for (int i = 1; fs::exists(dir, ec); ++i) dir = base.string() + "_" + std::to_string(i);
  fs::create_directories(dir, ec);
  if (ec) return input_error("cannot create " + dir.string() + ": " + ec.message());
  return dir;
}

}  // namespace kopt::pipeline
