#include "toolchain/tools.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "testing/test_support.h"

#include "util/fs.h"
#include "util/process.h"

namespace kopt::toolchain {

static std::string data(const std::string& name) { return util::read_file(testing_support::test_data_dir() + "/tools/" + name).value(); }

TEST(ToolVersions, ParsesNvccCuobjdumpAndNvdisasm) {
  auto nvcc = parse_cuda_tool_version(data("nvcc_13.0_version.txt"));
  ASSERT_TRUE(nvcc);
  EXPECT_EQ(nvcc->major, 13);
  EXPECT_EQ(nvcc->minor, 0);
  EXPECT_EQ(nvcc->patch, 88);
  EXPECT_EQ(nvcc->text, "13.0.88");
  auto cuobjdump = parse_cuda_tool_version(data("cuobjdump_13.5_version.txt"));
  ASSERT_TRUE(cuobjdump);
  EXPECT_EQ(cuobjdump->text, "13.5.37");
  auto nvdisasm = parse_cuda_tool_version(data("nvdisasm_13.5_version.txt"));
  ASSERT_TRUE(nvdisasm);
  EXPECT_EQ(nvdisasm->minor, 5);
  EXPECT_FALSE(parse_cuda_tool_version("gcc (Debian 12.2.0-14) 12.2.0"));
}

TEST(ToolVersions, ParsesNcuVersionFromRealH200Output) {
  auto v = parse_ncu_version(data("ncu_2025.3.1_version_h200.txt"));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 2025);
  EXPECT_EQ(v->minor, 3);
  EXPECT_EQ(v->patch, 1);
  EXPECT_EQ(v->text, "2025.3.1.0");
  EXPECT_FALSE(parse_ncu_version("ncu: command not found"));
}

TEST(ToolVersions, ArchSupportFromListGpuArch) {
  std::string list = data("nvcc_13.0_list_gpu_arch.txt");
  EXPECT_TRUE(arch_supported(list, 9, 0));
  EXPECT_TRUE(arch_supported(list, 8, 0));
  EXPECT_FALSE(arch_supported(list, 7, 0));  // sm_70 dropped in CUDA 13
  EXPECT_FALSE(arch_supported(list, 9, 9));
}

TEST(ToolVersions, VersionOrdering) {
  Version a{13, 0, 88, ""}, b{13, 5, 37, ""};
  EXPECT_TRUE(a < b);
  EXPECT_FALSE(b < a);
}

}  // namespace kopt::toolchain

namespace kopt::toolchain {

TEST(ToolLocations, ComputeSanitizerHonoursItsVariable) {
  const char* old = std::getenv("KOPT_COMPUTE_SANITIZER");
  std::string saved = old ? old : "";
  ::setenv("KOPT_COMPUTE_SANITIZER", "/opt/cs/compute-sanitizer", 1);
  EXPECT_EQ(find_compute_sanitizer(), "/opt/cs/compute-sanitizer");
  if (old) ::setenv("KOPT_COMPUTE_SANITIZER", saved.c_str(), 1);
  else ::unsetenv("KOPT_COMPUTE_SANITIZER");
  // Its version line (captured on the H200) has Nsight Compute's layout.
  auto text = util::read_file(testing_support::test_data_dir() + "/sanitize/compute-sanitizer-2025.3.1.0/version.txt");
  ASSERT_TRUE(text);
  auto v = parse_ncu_version(*text);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 2025);
  EXPECT_EQ(v->text, "2025.3.1.0");
}

}  // namespace kopt::toolchain

namespace kopt::toolchain {
namespace {

// version_output runs a tool once per (path, size, modification time): a script that counts its runs says how often.
TEST(ToolVersions, VersionOutputIsCachedUntilTheToolChanges) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("kopt-tool-versions-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  ::setenv("KOPT_CACHE_DIR", (root / "cache").c_str(), 1);
  const fs::path tool = root / "fake-ncu", count = root / "runs";
  auto write_tool = [&](const std::string& version) {
    ASSERT_TRUE(util::write_file_atomic(tool, "#!/bin/sh\necho x >> " + count.string() + "\necho 'Version " + version + "'\n").ok());
    fs::permissions(tool, fs::perms::owner_all);
  };
  auto runs = [&] {
    auto t = util::read_file(count);
    return t ? static_cast<int>(std::count(t->begin(), t->end(), '\n')) : 0;
  };
  write_tool("2025.3.1.0");
  EXPECT_EQ(version_output(tool.string(), 10), "Version 2025.3.1.0\n");
  EXPECT_EQ(version_output(tool.string(), 10), "Version 2025.3.1.0\n");
  EXPECT_EQ(runs(), 1) << "the second call ran the tool again";
  write_tool("2026.1.0.0.0");  // another size: another key
  EXPECT_EQ(version_output(tool.string(), 10), "Version 2026.1.0.0.0\n");
  EXPECT_EQ(runs(), 2);
  EXPECT_EQ(version_output((root / "missing").string(), 10), "");
  ::unsetenv("KOPT_CACHE_DIR");
  fs::remove_all(root);
}

}  // namespace
}  // namespace kopt::toolchain

namespace kopt::toolchain {
namespace {

// PYTHONDONTWRITEBYTECODE made every Python process kopt started on the H200 compile torch's modules again (about 3 s
// of each start): kopt keeps its children's bytecode under its own cache instead, unless the user chose otherwise.
TEST(PythonBytecode, KeptUnderKoptsCacheOnlyWhereBytecodeWouldNotBeWritten) {
  const std::filesystem::path cache = "/cache/pycache";
  EXPECT_EQ(python_bytecode_prefix("1", nullptr, nullptr, cache), cache);
  EXPECT_EQ(python_bytecode_prefix("x", "", "", cache), cache) << "any non-empty value, as Python reads it";
  EXPECT_FALSE(python_bytecode_prefix(nullptr, nullptr, nullptr, cache)) << "Python writes beside the sources: as is";
  EXPECT_FALSE(python_bytecode_prefix("", nullptr, nullptr, cache));
  EXPECT_FALSE(python_bytecode_prefix("1", "/mine", nullptr, cache)) << "the user's own prefix";
  for (const char* off : {"off", "0", "no", "false"}) EXPECT_FALSE(python_bytecode_prefix("1", nullptr, off, cache)) << off;
  EXPECT_EQ(python_bytecode_prefix("1", nullptr, "on", cache), cache);
}

// The whole path: kopt's environment changed once, a Python child it starts writes its bytecode under the prefix.
TEST(PythonBytecode, APythonChildWritesItsBytecodeUnderThePrefix) {
  const std::string python = find_python();
  if (python.empty()) GTEST_SKIP() << "python3 not found";
  const std::filesystem::path d = std::filesystem::path(::testing::TempDir()) / ("kopt_pycache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  ASSERT_TRUE(util::write_file_atomic(d / "src" / "kopt_probe_module.py", "VALUE = 7\n").ok());
  auto keep = [](const char* name) { const char* v = std::getenv(name); return v ? std::optional<std::string>(v) : std::nullopt; };
  const auto saved_dont = keep("PYTHONDONTWRITEBYTECODE"), saved_prefix = keep("PYTHONPYCACHEPREFIX"), saved_cache = keep("KOPT_CACHE_DIR"),
             saved_off = keep("KOPT_PYCACHE");
  ::setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
  ::unsetenv("PYTHONPYCACHEPREFIX");
  ::unsetenv("KOPT_PYCACHE");
  ::setenv("KOPT_CACHE_DIR", (d / "cache").c_str(), 1);
  auto prefix = keep_python_bytecode_in_cache();
  ASSERT_TRUE(prefix.has_value());
  EXPECT_EQ(std::getenv("PYTHONDONTWRITEBYTECODE"), nullptr);
  ASSERT_NE(std::getenv("PYTHONPYCACHEPREFIX"), nullptr);
  EXPECT_EQ(std::filesystem::path(std::getenv("PYTHONPYCACHEPREFIX")), *prefix);
  auto r = util::run_process({{python, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import kopt_probe_module; print(kopt_probe_module.VALUE)",
                               (d / "src").string()}, "", {}, 60});
  EXPECT_TRUE(r.success()) << r.describe() << r.stdout_text;
  bool found = false;
  for (const auto& e : std::filesystem::recursive_directory_iterator(*prefix))
    found = found || e.path().filename().string().rfind("kopt_probe_module.", 0) == 0;
  EXPECT_TRUE(found) << "no bytecode under " << *prefix;
  EXPECT_FALSE(std::filesystem::exists(d / "src" / "__pycache__")) << "nothing beside the source";
  auto restore = [](const char* name, const std::optional<std::string>& v) {
    if (v) ::setenv(name, v->c_str(), 1);
    else ::unsetenv(name);
  };
  restore("PYTHONDONTWRITEBYTECODE", saved_dont);
  restore("PYTHONPYCACHEPREFIX", saved_prefix);
  restore("KOPT_CACHE_DIR", saved_cache);
  restore("KOPT_PYCACHE", saved_off);
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace kopt::toolchain

TEST(KernelOrigin, ATritonKernelsCopiesAreToldTheUsersFileAndACudaKernelChangesNothing) {
  const char* before = std::getenv(kopt::toolchain::kKernelOriginEnv);
  const std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
  ::unsetenv(kopt::toolchain::kKernelOriginEnv);
  kopt::toolchain::run_kernel_copies_as("examples/vector_add/kernel.cu");
  EXPECT_EQ(std::getenv(kopt::toolchain::kKernelOriginEnv), nullptr) << "a .cu kernel's copies compile with its folder as an include dir";
  kopt::toolchain::run_kernel_copies_as("examples/corpus/liger_rms_norm/./kernel.py");
  ASSERT_NE(std::getenv(kopt::toolchain::kKernelOriginEnv), nullptr);
  const std::filesystem::path set = std::getenv(kopt::toolchain::kKernelOriginEnv);
  EXPECT_TRUE(set.is_absolute()) << set;
  EXPECT_EQ(set, (std::filesystem::current_path() / "examples/corpus/liger_rms_norm/kernel.py").lexically_normal());
  if (saved) ::setenv(kopt::toolchain::kKernelOriginEnv, saved->c_str(), 1);
  else ::unsetenv(kopt::toolchain::kKernelOriginEnv);
}
