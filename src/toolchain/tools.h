#pragma once
// Finding the external tools kopt drives (nvcc, ncu, cuobjdump, nvdisasm, python3) and reading their versions.
// Parsers are pure functions over the tools' own text, tested on captured output.
#include <filesystem>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

namespace kopt::toolchain {

struct Version {
  int major = 0, minor = 0, patch = 0;
  std::string text;  // as printed, e.g. "13.0.88" or "2025.3.1.0"
  bool operator<(const Version& o) const {
    return std::tie(major, minor, patch) < std::tie(o.major, o.minor, o.patch);
  }
};

// "Cuda compilation tools, release 13.0, V13.0.88" (nvcc, cuobjdump, nvdisasm print this line).
std::optional<Version> parse_cuda_tool_version(const std::string& text);
// "Version 2025.3.1.0 (build 36398880) (public-release)"
std::optional<Version> parse_ncu_version(const std::string& text);
// nvcc --list-gpu-arch: "compute_75\ncompute_80..." -> can it build for sm_XY?
bool arch_supported(const std::string& list_gpu_arch, int cc_major, int cc_minor);

// Locations: PATH first, then the usual install folders (CUDA_HOME, /usr/local/cuda, Nsight Compute,
// the nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm / triton wheels of the python3 in use).
// `tool ARGS...`'s standard output, for output that depends on the tool alone: cached in util::kopt_cache_dir("tools"),
// one file a key, under the tool's path, size and modification time and the arguments (a tool replaced in place runs
// again). A failed run is returned and not kept; empty when the tool does not run.
std::string tool_output(const std::string& tool, const std::vector<std::string>& args, double timeout_s);
// tool_output(tool, {"--version"}): ncu takes about a second to say it, and every kernel command records the versions.
std::string version_output(const std::string& tool, double timeout_s);
std::string find_nvcc();
std::string find_ncu();
std::string find_cuobjdump();
std::string find_nvdisasm();
// compute-sanitizer: $KOPT_COMPUTE_SANITIZER, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, then the toolkit's
// compute-sanitizer/ folder (older layouts). Its --version prints "Version 2025.3.1.0 (build ...)": parse it
// with parse_ncu_version.
std::string find_compute_sanitizer();
std::string find_python();  // $KOPT_PYTHON or python3

// Where Python is told to write no bytecode (PYTHONDONTWRITEBYTECODE, as in many container images and on the H200
// machine kopt is measured on), every Python process kopt starts compiles torch's modules again: about 3 s of each
// start (H200, 2026-12-04, cProfile of the golden-data harness). kopt's children then keep their bytecode under kopt's
// cache instead (PYTHONPYCACHEPREFIX): nothing is written beside any source, which is what the setting is for, and the
// compile is paid once. The prefix to use, or nullopt: bytecode is written as usual (the variable unset or empty), the
// user chose a prefix already, or KOPT_PYCACHE is off/0/no/false. Pure: the caller passes the variables.
std::optional<std::filesystem::path> python_bytecode_prefix(const char* dont_write_bytecode, const char* pycache_prefix,
                                                            const char* kopt_pycache, const std::filesystem::path& cache_dir);
// python_bytecode_prefix over kopt's own environment and util::kopt_cache_dir("pycache"); when it gives a prefix,
// kopt's environment (which its children inherit) gets PYTHONPYCACHEPREFIX and loses PYTHONDONTWRITEBYTECODE.
// Returns the prefix set, if any. kopt calls it once at its start.
std::optional<std::filesystem::path> keep_python_bytecode_in_cache();
// The variable that tells kopt's Python harness which file a Triton kernel's copies stand for (KOPT_KERNEL_ORIGIN):
// a derived space's annotated copy or a candidate lives in the run directory, and a kernel that finds its package or
// its siblings through __file__ (os.path.dirname(__file__), a sys.path entry beside it) must find them beside the
// user's file. The harness loads a copy with the original's __file__ and its folder on sys.path
// (python/kopt_harness/refmod.py). Sets it to the kernel's absolute path when `kernel` is a .py file; nothing otherwise.
// Call before any thread starts (setenv).
inline constexpr const char* kKernelOriginEnv = "KOPT_KERNEL_ORIGIN";
void run_kernel_copies_as(const std::filesystem::path& kernel);
// The site-packages folders of find_python() (asked once per process; empty without python3).
const std::vector<std::string>& python_site_dirs();
// The directory holding kopt's Python harness (python/kopt_harness): $KOPT_PYTHON_DIR, next to the executable
// (python_harness_dir_near), or in the source tree. Empty when missing.
std::string python_harness_dir();
// Next to an executable in `exe_dir`: an installed prefix (exe_dir/../share/kopt/python, as `cmake --install`
// lays it out) or a tree holding python/kopt_harness a few levels up. Empty when neither has it.
std::string python_harness_dir_near(const std::filesystem::path& exe_dir);

}  // namespace kopt::toolchain
