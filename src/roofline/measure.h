#pragma once
// Getting the ceilings of a GPU: from the per-GPU cache, else by building and running the ceilings probe
// (nvcc, then a child process), else, labelled, from the datasheet. All side effects go through a
// util::CommandRunner (fakeable) and the cache directory.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "device/gpu_info.h"
#include "roofline/ceilings.h"
#include "util/process.h"

namespace kopt::roofline {

struct CeilingsOptions {
  std::filesystem::path cache_dir;  // default: default_ceilings_cache_dir()
  std::string nvcc;                 // default: toolchain::find_nvcc()
  // The driver part of the cache key. Default: the display driver from /proc/driver/nvidia/version, else
  // `cuda_driver_fallback` (e.g. DriverInfo::driver_version_text(), "13.0").
  std::string driver_version;
  std::string cuda_driver_fallback;
  double build_timeout_s = 300;
  double probe_timeout_s = 600;
  bool quick = false;            // the probe's --quick (small sizes): a smoke test, never cached
  bool allow_datasheet = true;   // fall back on the datasheet (labelled) when the probe cannot run
  util::CommandRunner* runner = nullptr;  // default: a util::SystemRunner
  // Where kopt's build put its prebuilt probes (kopt_ceilings_probe_<arch>, CMakeLists.txt): used before building one,
  // and built after all when it cannot start there. Empty: none (default_prebuilt_probe_dir() is kopt's own).
  std::filesystem::path prebuilt_dir;
};

// $KOPT_CACHE_DIR/ceilings, else $XDG_CACHE_HOME/kopt/ceilings, else ~/.cache/kopt/ceilings.
std::filesystem::path default_ceilings_cache_dir();
std::filesystem::path ceilings_cache_path(const std::filesystem::path& dir, const std::string& uuid);
// The folder of the running kopt, where its build puts the prebuilt probes; empty with KOPT_PREBUILT_PROBE=off.
std::filesystem::path default_prebuilt_probe_dir();
// `dir`/kopt_ceilings_probe_<arch> when it is a file; nullopt otherwise (and for an empty `dir`).
std::optional<std::filesystem::path> prebuilt_probe(const std::filesystem::path& dir, const std::string& arch);
// A probe for `arch` that runs without building anything now: the prebuilt one, else one built before into the cache.
std::optional<std::filesystem::path> ready_probe(const device::GpuInfo& gpu, const CeilingsOptions& opts = {});
// Whether get_ceilings(gpu, false, opts) would answer from the cache (nothing measured).
bool ceilings_cached(const device::GpuInfo& gpu, const CeilingsOptions& opts = {});

// The ceilings of `gpu`: the cached ones when their key (UUID, driver, max clocks) matches and `remeasure` is
// false; otherwise measured now with the probe (and cached). When the probe cannot be built or run, the
// datasheet (source=datasheet, with a warning saying why) if kopt knows the GPU, else the error.
// Roofs the probe skipped are filled from the datasheet where it has them, each labelled.
Result<Ceilings> get_ceilings(const device::GpuInfo& gpu, bool remeasure, const CeilingsOptions& opts = {});

// --- pieces, exposed for tests -------------------------------------------------------------------------
CeilingsKey make_key(const device::GpuInfo& gpu, const std::string& driver_version);
// The cached ceilings at `path` if its key equals `key`; an Error saying what differs (or what is missing).
Result<Ceilings> load_cached_ceilings(const std::filesystem::path& path, const CeilingsKey& key);
Status store_ceilings(const std::filesystem::path& path, const Ceilings& c);

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." -> "580.159.04".
std::optional<std::string> parse_nvrm_version(const std::string& proc_driver_version_text);

// Where cuBLASLt's header and library are, looked up next to nvcc (<root>/include, <root>/lib64,
// <root>/targets/x86_64-linux/...), then in $CUDA_HOME and /usr/local/cuda.
struct CublasLtDirs {
  std::string include_dir, lib_dir;
};
std::optional<CublasLtDirs> find_cublaslt(const std::string& nvcc);

// The nvcc command line that builds the probe. Without cuBLASLt it defines KOPT_PROBE_NO_CUBLASLT (the
// tensor-core ceilings are then reported as skipped).
std::vector<std::string> probe_build_command(const std::string& nvcc, const std::string& arch, const std::string& src,
                                             const std::string& exe, const std::optional<CublasLtDirs>& cublaslt);

// Builds the probe into `dir` (once per source, nvcc and arch: the executable is reused). Returns its path.
// Tries with cuBLASLt first, then without it (adding a warning) when that build fails.
Result<std::filesystem::path> build_probe(util::CommandRunner& runner, const std::string& nvcc, const std::string& arch,
                                          const std::filesystem::path& dir, double timeout_s,
                                          std::vector<std::string>& warnings);

}  // namespace kopt::roofline
