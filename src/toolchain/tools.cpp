#include "toolchain/tools.h"

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <tuple>

#include "util/fs.h"
#include "util/hash.h"
#include "util/json_io.h"
#include "util/process.h"
#include "util/strings.h"

namespace kopt::toolchain {

namespace fs = std::filesystem;

std::optional<Version> parse_cuda_tool_version(const std::string& text) {
  static const std::regex re(R"(release\s+(\d+)\.(\d+),\s*V(\d+)\.(\d+)\.(\d+))");
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  Version v;
  v.major = std::stoi(m[3]);
  v.minor = std::stoi(m[4]);
  v.patch = std::stoi(m[5]);
  v.text = m[3].str() + "." + m[4].str() + "." + m[5].str();
  return v;
}

std::optional<Version> parse_ncu_version(const std::string& text) {
  static const std::regex re(R"(Version\s+(\d+)\.(\d+)\.(\d+)(\.\d+)?)");
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  Version v;
  v.major = std::stoi(m[1]);
  v.minor = std::stoi(m[2]);
  v.patch = std::stoi(m[3]);
  v.text = m[1].str() + "." + m[2].str() + "." + m[3].str() + m[4].str();
  return v;
}

bool arch_supported(const std::string& list, int cc_major, int cc_minor) {
  std::string want = "compute_" + std::to_string(cc_major) + std::to_string(cc_minor);
  for (const auto& line : util::split_lines(list))
    for (const auto& tok : util::split(line, ' '))
      if (util::trim(tok) == want) return true;
  return false;
}

namespace {

std::string first_existing(const std::vector<std::string>& candidates) {
  for (const auto& c : candidates) {
    std::error_code ec;
    if (!c.empty() && fs::is_regular_file(c, ec)) return c;
  }
  return "";
}

std::string cuda_home() {
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) return v;
  return "/usr/local/cuda";
}

// Binaries shipped in PyPI wheels of the python3 in use (nvidia-cuda-cuobjdump, triton).
std::vector<std::string> python_wheel_bins(const std::string& tool) {
  std::vector<std::string> out;
  for (const auto& d : python_site_dirs()) {
    out.push_back(d + "/nvidia/cu13/bin/" + tool);
    out.push_back(d + "/nvidia/cuda_cuobjdump/bin/" + tool);
    out.push_back(d + "/nvidia/cuda_nvdisasm/bin/" + tool);
    out.push_back(d + "/triton/backends/nvidia/bin/" + tool);
  }
  return out;
}

std::string find_cuda_tool(const std::string& tool, bool with_wheels) {
  if (const char* v = std::getenv(("KOPT_" + [&] {
        std::string up;
        for (char c : tool) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return up;
      }()).c_str());
      v && *v)
    return v;
  std::string p = util::find_in_path(tool);
  if (!p.empty()) return p;
  std::vector<std::string> cands = {cuda_home() + "/bin/" + tool, "/usr/local/cuda/bin/" + tool};
  if (with_wheels) {
    auto w = python_wheel_bins(tool);
    cands.insert(cands.end(), w.begin(), w.end());
  }
  return first_existing(cands);
}

}  // namespace

std::string find_nvcc() { return find_cuda_tool("nvcc", false); }
std::string find_cuobjdump() { return find_cuda_tool("cuobjdump", true); }
std::string find_nvdisasm() { return find_cuda_tool("nvdisasm", true); }

std::string find_compute_sanitizer() {
  if (const char* v = std::getenv("KOPT_COMPUTE_SANITIZER"); v && *v) return v;
  std::string p = util::find_in_path("compute-sanitizer");
  if (!p.empty()) return p;
  return first_existing({cuda_home() + "/bin/compute-sanitizer", "/usr/local/cuda/bin/compute-sanitizer",
                         cuda_home() + "/compute-sanitizer/compute-sanitizer",
                         "/usr/local/cuda/compute-sanitizer/compute-sanitizer"});
}

std::string find_ncu() {
  if (const char* v = std::getenv("KOPT_NCU"); v && *v) return v;
  std::string p = util::find_in_path("ncu");
  if (!p.empty()) return p;
  std::vector<std::string> cands = {cuda_home() + "/bin/ncu", "/usr/local/cuda/bin/ncu"};
  std::error_code ec;
  for (const char* root : {"/opt/nvidia", "/usr/local/cuda"}) {
    if (!fs::is_directory(root, ec)) continue;
    for (const auto& e : fs::directory_iterator(root, ec))
      if (util::starts_with(e.path().filename().string(), "nsight-compute")) {
        cands.push_back(e.path().string() + "/ncu");
        for (const auto& sub : fs::directory_iterator(e.path(), ec)) cands.push_back(sub.path().string() + "/ncu");
      }
  }
  return first_existing(cands);
}

std::string find_python() {
  if (const char* v = std::getenv("KOPT_PYTHON"); v && *v) return v;
  return util::find_in_path("python3");
}

std::optional<fs::path> python_bytecode_prefix(const char* dont_write_bytecode, const char* pycache_prefix,
                                               const char* kopt_pycache, const fs::path& cache_dir) {
  if (kopt_pycache && util::is_off_word(kopt_pycache)) return std::nullopt;
  if (!dont_write_bytecode || !*dont_write_bytecode) return std::nullopt;  // Python writes beside the sources
  if (pycache_prefix && *pycache_prefix) return std::nullopt;             // the user's own choice
  return cache_dir;
}

std::optional<fs::path> keep_python_bytecode_in_cache() {
  auto prefix = python_bytecode_prefix(std::getenv("PYTHONDONTWRITEBYTECODE"), std::getenv("PYTHONPYCACHEPREFIX"),
                                       std::getenv("KOPT_PYCACHE"), util::kopt_cache_dir("pycache"));
  if (!prefix) return std::nullopt;
  // Not made here (a command that fails on its input leaves no cache folder): Python makes it when it first writes.
  ::setenv("PYTHONPYCACHEPREFIX", prefix->c_str(), 1);
  ::unsetenv("PYTHONDONTWRITEBYTECODE");
  return prefix;
}

void run_kernel_copies_as(const fs::path& kernel) {
  if (kernel.extension() != ".py") return;
  std::error_code ec;
  const fs::path abs = fs::absolute(kernel, ec);
  ::setenv(kKernelOriginEnv, (ec ? kernel : abs).lexically_normal().c_str(), 1);
}

const std::vector<std::string>& python_site_dirs() {
  static const std::vector<std::string> dirs = [] {
    std::vector<std::string> out;
    std::string py = find_python();
    if (py.empty()) return out;
    util::ProcessSpec spec{{py, "-c", "import site,sys;print('\\n'.join(site.getsitepackages()+[site.getusersitepackages()]))"}};
    spec.timeout_s = 20;
    auto r = util::run_process(spec);
    if (r.success())
      for (const auto& line : util::split_lines(r.stdout_text))
        if (!util::trim(line).empty()) out.push_back(util::trim(line));
    return out;
  }();
  return dirs;
}

std::string python_harness_dir_near(const fs::path& exe_dir) {
  for (const auto& c : {exe_dir / ".." / "share" / "kopt" / "python", util::find_upwards(exe_dir, "python/kopt_harness").parent_path()}) {
    std::error_code ec;
    if (!c.empty() && fs::is_regular_file(c / "kopt_harness" / "__init__.py", ec)) return fs::weakly_canonical(c, ec).string();
  }
  return "";
}

std::string python_harness_dir() {
  std::vector<fs::path> cands = {python_harness_dir_near(util::executable_dir()), fs::path(KOPT_SOURCE_DIR) / "python"};
  if (const char* v = std::getenv("KOPT_PYTHON_DIR"); v && *v) cands.insert(cands.begin(), v);
  for (const auto& c : cands) {
    std::error_code ec;
    if (fs::is_regular_file(c / "kopt_harness" / "__init__.py", ec)) return fs::weakly_canonical(c, ec).string();
  }
  return "";
}

std::string tool_output(const std::string& tool, const std::vector<std::string>& args, double timeout_s) {
  namespace fs = std::filesystem;
  std::vector<std::string> argv = {tool};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string stamp = util::file_stamp(tool);
  if (stamp.empty()) return util::run_process({argv, "", {}, timeout_s}).stdout_text;
  util::Hasher h;
  h.add("kopt-tool-output-1").add(fs::absolute(tool).lexically_normal().string()).add(stamp);
  for (const auto& a : args) h.add(a);
  const fs::path file = util::kopt_cache_dir("tools") / (h.hex() + ".txt");
  if (auto text = util::read_file(file)) return *text;
  auto r = util::run_process({argv, "", {}, timeout_s});
  if (!r.success()) return r.stdout_text;
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  (void)util::write_file_atomic(file, r.stdout_text);  // a cache: a failed write costs a run next time
  return r.stdout_text;
}

std::string version_output(const std::string& tool, double timeout_s) { return tool_output(tool, {"--version"}, timeout_s); }

}  // namespace kopt::toolchain
