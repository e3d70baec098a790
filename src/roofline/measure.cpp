#include "roofline/measure.h"

#include <fmt/format.h>

#include <cstdlib>
#include <regex>

#include "roofline/probe_output.h"
#include "roofline/probe_source.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/json_io.h"
#include "util/strings.h"

namespace kopt::roofline {

namespace fs = std::filesystem;

fs::path default_ceilings_cache_dir() {
  if (const char* v = std::getenv("KOPT_CACHE_DIR"); v && *v) return fs::path(v) / "ceilings";
  if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v) return fs::path(v) / "kopt" / "ceilings";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".cache" / "kopt" / "ceilings";
}

fs::path ceilings_cache_path(const fs::path& dir, const std::string& uuid) {
  return dir / ((uuid.empty() ? std::string("unknown-gpu") : uuid) + ".json");
}

fs::path default_prebuilt_probe_dir() { return util::env_off("KOPT_PREBUILT_PROBE") ? fs::path() : util::executable_dir(); }

std::optional<fs::path> prebuilt_probe(const fs::path& dir, const std::string& arch) {
  if (dir.empty()) return std::nullopt;
  const fs::path exe = dir / ("kopt_ceilings_probe_" + arch);
  std::error_code ec;
  if (fs::is_regular_file(exe, ec)) return exe;
  return std::nullopt;
}

CeilingsKey make_key(const device::GpuInfo& gpu, const std::string& driver_version) {
  return {gpu.uuid, driver_version, gpu.sm_clock_khz / 1000, gpu.mem_clock_khz / 1000,
          util::content_hash(ceilings_probe_source()).substr(0, 16)};
}

Result<Ceilings> load_cached_ceilings(const fs::path& path, const CeilingsKey& key) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return input_error("no cached ceilings at " + path.string());
  KOPT_TRY_ASSIGN(util::Json j, util::read_json(path));
  auto c = ceilings_from_json(j);
  if (!c) return input_error(path.string() + ": " + c.error().message);
  if (!(c->key == key)) return input_error("cached ceilings are stale (" + describe_key_change(c->key, key) + ")");
  return c;
}

Status store_ceilings(const fs::path& path, const Ceilings& c) {
  return util::write_json_atomic(path, "ceilings", to_json(c));
}

std::optional<std::string> parse_nvrm_version(const std::string& text) {
  static const std::regex re(R"(NVRM version:.*?\s(\d{2,4}\.\d+(?:\.\d+)?)\s)");
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  return m[1].str();
}

std::optional<CublasLtDirs> find_cublaslt(const std::string& nvcc) {
  std::vector<fs::path> roots;
  if (!nvcc.empty()) roots.push_back(fs::path(nvcc).parent_path().parent_path());
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) roots.emplace_back(v);
  roots.emplace_back("/usr/local/cuda");
  std::error_code ec;
  for (const auto& root : roots) {
    for (const auto& [inc, lib] : std::vector<std::pair<fs::path, fs::path>>{
             {root / "include", root / "lib64"},
             {root / "targets/x86_64-linux/include", root / "targets/x86_64-linux/lib"},
             {root / "include", root / "lib"}}) {
      if (fs::is_regular_file(inc / "cublasLt.h", ec) &&
          (fs::exists(lib / "libcublasLt.so", ec) || fs::exists(lib / "libcublasLt.a", ec)))
        return CublasLtDirs{fs::weakly_canonical(inc, ec).string(), fs::weakly_canonical(lib, ec).string()};
    }
  }
  return std::nullopt;
}

std::vector<std::string> probe_build_command(const std::string& nvcc, const std::string& arch, const std::string& src,
                                             const std::string& exe, const std::optional<CublasLtDirs>& lt) {
  std::vector<std::string> cmd = {nvcc, "-arch=" + arch, "-O3", "-std=c++17", "-o", exe, src};
  if (lt) {
    cmd.insert(cmd.end(), {"-I" + lt->include_dir, "-L" + lt->lib_dir, "-Xlinker", "-rpath", "-Xlinker", lt->lib_dir,
                           "-lcublasLt", "-lcublas"});
  } else {
    cmd.push_back("-DKOPT_PROBE_NO_CUBLASLT");
  }
  cmd.push_back("-ldl");
  return cmd;
}

namespace {

std::string tail(const std::string& s, size_t n) {
  std::string t = util::trim(s);
  return t.size() > n ? "..." + t.substr(t.size() - n) : t;
}

std::string now_iso() { return util::utc_now_iso(); }

std::string read_display_driver_version() {
  auto text = util::read_file("/proc/driver/nvidia/version");
  if (!text) return "";
  return parse_nvrm_version(*text).value_or("");
}

// Where build_probe puts the probe of `arch` built with cuBLASLt `lt` (or without) into `dir`: a folder per source and
// command line.
fs::path probe_exe_path(const std::string& nvcc, const std::string& arch, const fs::path& dir,
                        const std::optional<CublasLtDirs>& lt) {
  auto probe_cmd = probe_build_command(nvcc, arch, "SRC", "EXE", lt);
  return dir / util::Hasher().add(ceilings_probe_source()).add(util::join(probe_cmd, " ")).hex().substr(0, 16) /
         "kopt_ceilings_probe";
}

// That probe when it was built before; nullopt if not.
std::optional<fs::path> built_probe(const std::string& nvcc, const std::string& arch, const fs::path& dir,
                                    const std::optional<CublasLtDirs>& lt) {
  fs::path exe = probe_exe_path(nvcc, arch, dir, lt);
  std::error_code ec;
  if (fs::is_regular_file(exe, ec)) return exe;
  return std::nullopt;
}

std::string nvcc_of(const CeilingsOptions& opts) { return opts.nvcc.empty() ? toolchain::find_nvcc() : opts.nvcc; }

std::string probe_arch(const device::GpuInfo& gpu) { return gpu.cc_major > 0 ? gpu.arch() : "sm_90"; }

std::string driver_of(const CeilingsOptions& opts) {
  std::string driver = opts.driver_version;
  if (driver.empty()) driver = read_display_driver_version();
  if (driver.empty()) driver = opts.cuda_driver_fallback;
  return driver;
}

fs::path cache_dir_of(const CeilingsOptions& opts) {
  return opts.cache_dir.empty() ? default_ceilings_cache_dir() : opts.cache_dir;
}

// Build (or take the prebuilt), run and parse the probe. Warnings (e.g. built without cuBLASLt) are appended to
// `warnings`.
Result<Ceilings> measure(const device::GpuInfo& gpu, const CeilingsKey& key, const CeilingsOptions& opts,
                         util::CommandRunner& runner, const fs::path& cache_dir, std::vector<std::string>& warnings) {
  const std::string arch = probe_arch(gpu);
  auto run_probe = [&](const fs::path& exe) {
    util::ProcessSpec spec;
    spec.argv = {exe.string(), "--device", std::to_string(gpu.index)};
    if (opts.quick) spec.argv.push_back("--quick");
    spec.timeout_s = opts.probe_timeout_s;
    return runner.run(spec);
  };
  util::ProcessResult r;
  std::optional<fs::path> exe = prebuilt_probe(opts.prebuilt_dir, arch);
  if (exe) {
    r = run_probe(*exe);
    // Built on another machine: where its loader finds no cuBLASLt (exit 127) it is built here instead.
    if (!r.started || (r.exit_code == 127 && !r.timed_out && r.term_signal == 0)) {
      warnings.push_back("the prebuilt probe " + exe->string() + " could not start here (" +
                         (r.started ? r.describe() + ": " + tail(r.stderr_text, 300) : r.start_error) +
                         "): built with this machine's nvcc");
      exe.reset();
    }
  }
  if (!exe) {
    const std::string nvcc = nvcc_of(opts);
    if (nvcc.empty())
      return gate_error(
          "nvcc not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin): cannot build the "
          "ceilings probe; install the CUDA toolkit or set KOPT_NVCC");
    KOPT_TRY_ASSIGN(exe, build_probe(runner, nvcc, arch, cache_dir / "probe", opts.build_timeout_s, warnings));
    r = run_probe(*exe);
  }
  if (!r.started) return gate_error("could not start the ceilings probe " + exe->string() + ": " + r.start_error);
  if (r.timed_out || r.term_signal != 0 || r.interrupted)
    return gate_error("the ceilings probe " + r.describe() + "; its last output: " + tail(r.stderr_text, 600));
  auto parsed = parse_probe_output(r.stdout_text);
  if (!parsed) {
    Error e = parsed.error();
    e.message += " (probe " + r.describe() + "; stderr: " + tail(r.stderr_text, 600) + ")";
    return e;
  }
  KOPT_TRY_ASSIGN(Ceilings c, ceilings_from_probe(*parsed, key, now_iso()));
  if (!parsed->driver_version.empty() && parsed->driver_version != key.driver_version)
    c.warnings.push_back("the probe saw driver " + parsed->driver_version + ", kopt keyed the cache on " +
                         key.driver_version);
  return c;
}

}  // namespace

Result<fs::path> build_probe(util::CommandRunner& runner, const std::string& nvcc, const std::string& arch,
                             const fs::path& dir, double timeout_s, std::vector<std::string>& warnings) {
  const std::string& source = ceilings_probe_source();
  auto lt = find_cublaslt(nvcc);
  std::vector<std::optional<CublasLtDirs>> attempts = {lt};
  if (lt) attempts.push_back(std::nullopt);  // then without cuBLASLt
  std::string first_error;
  for (const auto& attempt : attempts) {
    const fs::path exe = probe_exe_path(nvcc, arch, dir, attempt), src = exe.parent_path() / "ceilings_probe.cu";
    std::error_code ec;
    if (fs::is_regular_file(exe, ec)) {
      if (!attempt) warnings.push_back("the probe was built without cuBLASLt: tensor-core ceilings are not measured");
      return exe;
    }
    KOPT_TRY(util::write_file_atomic(src, source));
    util::ProcessSpec spec;
    spec.argv = probe_build_command(nvcc, arch, src.string(), exe.string(), attempt);
    spec.timeout_s = timeout_s;
    spec.merge_stderr = true;
    auto r = runner.run(spec);
    if (r.success() && fs::is_regular_file(exe, ec)) {
      if (!attempt)
        warnings.push_back(
            lt ? "building the probe with cuBLASLt failed (" + first_error + "): tensor-core ceilings are not measured"
               : "cuBLASLt not found next to nvcc or in $CUDA_HOME: tensor-core ceilings are not measured");
      return exe;
    }
    std::string why = r.describe() + ": " + tail(r.stdout_text, 800);
    if (first_error.empty()) first_error = why;
  }
  return gate_error("could not build the ceilings probe with " + nvcc + " (" + first_error + ")");
}

Result<Ceilings> get_ceilings(const device::GpuInfo& gpu, bool remeasure, const CeilingsOptions& opts) {
  util::SystemRunner system_runner;
  util::CommandRunner& runner = opts.runner ? *opts.runner : system_runner;
  const fs::path dir = cache_dir_of(opts);
  const CeilingsKey key = make_key(gpu, driver_of(opts));
  const fs::path path = ceilings_cache_path(dir, gpu.uuid);

  std::vector<std::string> notes;
  if (!remeasure && !opts.quick) {
    auto cached = load_cached_ceilings(path, key);
    if (cached) return cached;
    std::error_code ec;
    if (fs::exists(path, ec)) notes.push_back("re-measured: " + cached.error().message);
  }
  std::vector<std::string> warnings;
  auto measured = measure(gpu, key, opts, runner, dir, warnings);
  auto datasheet = datasheet_for(gpu.name);
  if (!measured) {
    if (!opts.allow_datasheet || !datasheet) return measured.error();
    Ceilings c = datasheet_ceilings(*datasheet, key, gpu.name, now_iso());
    c.warnings = warnings;
    c.warnings.push_back("ceilings are NOT measured (" + measured.error().message + "); using the " + datasheet->label);
    return c;
  }
  Ceilings c = std::move(measured).value();
  c.warnings.insert(c.warnings.begin(), warnings.begin(), warnings.end());
  c.warnings.insert(c.warnings.end(), notes.begin(), notes.end());
  if (datasheet) {
    auto filled = fill_from_datasheet(c, *datasheet);
    for (Roof r : filled)
      c.warnings.push_back(std::string(roof_info(r).name) + " is the " + datasheet->label + " value (not measured)");
  }
  if (!opts.quick) {
    auto st = store_ceilings(path, c);
    if (!st) c.warnings.push_back("could not cache the ceilings: " + st.error().message);
  }
  return c;
}

std::optional<fs::path> ready_probe(const device::GpuInfo& gpu, const CeilingsOptions& opts) {
  const std::string arch = probe_arch(gpu);
  if (auto p = prebuilt_probe(opts.prebuilt_dir, arch)) return p;
  const std::string nvcc = nvcc_of(opts);
  if (nvcc.empty()) return std::nullopt;
  const fs::path dir = cache_dir_of(opts) / "probe";
  auto lt = find_cublaslt(nvcc);
  if (auto p = built_probe(nvcc, arch, dir, lt)) return p;
  if (lt) return built_probe(nvcc, arch, dir, std::nullopt);
  return std::nullopt;
}

bool ceilings_cached(const device::GpuInfo& gpu, const CeilingsOptions& opts) {
  return load_cached_ceilings(ceilings_cache_path(cache_dir_of(opts), gpu.uuid), make_key(gpu, driver_of(opts))).ok();
}

}  // namespace kopt::roofline
