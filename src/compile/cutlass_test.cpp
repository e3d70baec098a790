#include "compile/cutlass.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "compile/command.h"
#include "compile/compiler.h"
#include "compile/pool.h"
#include "util/fs.h"

namespace kopt::compile {

namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("kopt-cutlass-compile-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

size_t index_of(const std::vector<std::string>& v, const std::string& x) {
  return static_cast<size_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

}  // namespace

TEST(Cutlass, RecognisesCutlassAndCuteIncludes) {
  EXPECT_TRUE(uses_cutlass("#include <cutlass/gemm/device/gemm_universal_adapter.h>\n"));
  EXPECT_TRUE(uses_cutlass("  #  include \"cute/tensor.hpp\"\n"));
  EXPECT_TRUE(uses_cutlass("#include <cuda_runtime.h>\n#include <cute/tensor.hpp>  // CuTe only\n"));
  EXPECT_FALSE(uses_cutlass("// #include <cutlass/cutlass.h>\n/* #include <cute/tensor.hpp> */\n"));
  EXPECT_FALSE(uses_cutlass("#include <cutlass_like.h>\n#include \"my_cute/x.h\"\n"));
  EXPECT_FALSE(uses_cutlass("const char* s = \"cutlass/\";\n__global__ void cutlass_kernel() {}\n"));
}

TEST(Cutlass, PlainHopperAndLaterTargetsBecomeArchSpecific) {
  EXPECT_EQ(cutlass_arch("sm_90"), "sm_90a");
  EXPECT_EQ(cutlass_arch("sm_100"), "sm_100a");
  EXPECT_EQ(cutlass_arch("sm_90a"), "sm_90a");
  EXPECT_EQ(cutlass_arch("sm_100f"), "sm_100f");
  EXPECT_EQ(cutlass_arch("sm_80"), "sm_80");  // Ampere has no arch-specific variant; CUTLASS 2.x runs there
  EXPECT_EQ(cutlass_arch("sm_89"), "sm_89");
  EXPECT_EQ(cutlass_arch("compute_90"), "compute_90");
  EXPECT_EQ(cutlass_arch("sm_"), "sm_");
  EXPECT_EQ(cutlass_arch("sm_9999999999"), "sm_9999999999");
}

TEST(Cutlass, ApplyAddsWhatCutlassNeedsBeforeTheUsersFlags) {
  CompileRequest r;
  r.source = "kernel.cu";
  r.extra_flags = {"-maxrregcount=128"};
  r.include_dirs = {"/mine"};
  apply_cutlass(r, "/opt/cutlass/include");
  EXPECT_TRUE(r.cutlass);
  EXPECT_EQ(r.arch, "sm_90a");
  EXPECT_EQ(r.include_dirs, (std::vector<std::string>{"/mine", "/opt/cutlass/include"}));
  EXPECT_EQ(r.extra_flags,
            (std::vector<std::string>{"-std=c++17", "--expt-relaxed-constexpr", "-DNDEBUG", "-maxrregcount=128"}));
  EXPECT_EQ(r.est_mem_bytes, kCutlassJobMemBytes);
  auto flags = nvcc_flags(r);
  ASSERT_TRUE(flags);
  EXPECT_LT(index_of(*flags, "-gencode=arch=compute_90a,code=sm_90a"), flags->size());
  EXPECT_LT(index_of(*flags, "-I/opt/cutlass/include"), flags->size());
  // Applying twice changes nothing: a request configured by the pipeline may be configured again.
  CompileRequest again = r;
  apply_cutlass(again, "/opt/cutlass/include");
  EXPECT_EQ(again.extra_flags, r.extra_flags);
  EXPECT_EQ(again.include_dirs, r.include_dirs);
  EXPECT_EQ(again.arch, r.arch);
}

TEST(Cutlass, ApplyKeepsWhatTheUserAlreadySaid) {
  CompileRequest r;
  r.arch = "sm_80";
  r.extra_flags = {"-std=c++20", "-UNDEBUG", "--expt-relaxed-constexpr"};
  r.est_mem_bytes = 8ull << 30;
  apply_cutlass(r, "");
  EXPECT_EQ(r.arch, "sm_80");
  EXPECT_TRUE(r.include_dirs.empty());
  EXPECT_EQ(r.extra_flags, (std::vector<std::string>{"-std=c++20", "-UNDEBUG", "--expt-relaxed-constexpr"}));
  EXPECT_EQ(r.est_mem_bytes, 8ull << 30);  // a larger estimate stays
  CompileRequest d;
  d.defines["NDEBUG"] = "";
  apply_cutlass(d, "");
  EXPECT_EQ(d.extra_flags, (std::vector<std::string>{"-std=c++17", "--expt-relaxed-constexpr"}));
}

TEST(Cutlass, AutoJobsSizesThePoolForCutlassCompiles) {
  // On this 2-core, 24 GiB machine with ~6 GiB free, two plain compiles run at once but one CUTLASS compile.
  EXPECT_EQ(auto_jobs(2, 6ull << 30, kDefaultJobMemBytes), 2);
  EXPECT_EQ(auto_jobs(2, 6ull << 30, kCutlassJobMemBytes), 1);
  EXPECT_EQ(auto_jobs(16, 100ull << 30, kCutlassJobMemBytes), 16);
  EXPECT_EQ(auto_jobs(16, 20ull << 30, kCutlassJobMemBytes), 5);
}

TEST(Cutlass, ConfigureFindsCutlassThroughTheKernelsOwnHeaders) {
  fs::path d = scratch("configure");
  fs::create_directories(d / "inc" / "cutlass");
  ASSERT_TRUE(util::write_file_atomic(d / "inc" / "cutlass" / "cutlass.h", "#pragma once\n"));
  ASSERT_TRUE(util::write_file_atomic(d / "config.h", "#pragma once\n#include <cutlass/cutlass.h>\n"));
  ASSERT_TRUE(util::write_file_atomic(d / "via_header.cu", "#include \"config.h\"\nextern \"C\" void solve() {}\n"));
  ASSERT_TRUE(util::write_file_atomic(d / "plain.cu", "#include <cuda_runtime.h>\nextern \"C\" void solve() {}\n"));

  CompileRequest r;
  r.source = d / "via_header.cu";
  r.include_dirs = {(d / "inc").string()};
  EXPECT_TRUE(is_cutlass_source(r.source));
  EXPECT_TRUE(configure_cutlass(r, false));
  EXPECT_TRUE(r.cutlass);
  EXPECT_EQ(r.arch, "sm_90a");
  EXPECT_EQ(r.include_dirs, (std::vector<std::string>{(d / "inc").string()}));  // already there: nothing added
  EXPECT_EQ(r.est_mem_bytes, kCutlassJobMemBytes);
  EXPECT_EQ(cutlass_headers_problem(r), "");

  CompileRequest plain;
  plain.source = d / "plain.cu";
  EXPECT_FALSE(is_cutlass_source(plain.source));
  EXPECT_FALSE(configure_cutlass(plain, false));
  EXPECT_FALSE(plain.cutlass);
  EXPECT_EQ(plain.arch, "sm_90");
  EXPECT_TRUE(plain.extra_flags.empty());
  EXPECT_EQ(plain.est_mem_bytes, 0u);
  // --cutlass-include forces it.
  plain.include_dirs = {(d / "inc").string()};
  EXPECT_TRUE(configure_cutlass(plain, true));
  EXPECT_TRUE(plain.cutlass);
  EXPECT_FALSE(is_cutlass_source(d / "missing.cu"));
  fs::remove_all(d);
}

TEST(Cutlass, MissingHeadersNameTheFixes) {
  fs::path d = scratch("missing");
  ASSERT_TRUE(util::write_file_atomic(d / "k.cu", "#include <cutlass/cutlass.h>\n"));
  for (const char* sys : {"/usr/include/cutlass/cutlass.h", "/usr/local/include/cutlass/cutlass.h",
                          "/usr/local/cuda/include/cutlass/cutlass.h"})
    if (fs::exists(sys)) GTEST_SKIP() << sys << " exists on this machine";
  CompileRequest r;
  r.source = d / "k.cu";
  apply_cutlass(r, "");  // nothing found
  std::string msg = cutlass_headers_problem(r);
  EXPECT_NE(msg.find("CUTLASS headers not found"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--cutlass-include"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CUTLASS_PATH"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nvidia-cutlass"), std::string::npos) << msg;
  // The same request with headers beside the kernel (nvcc's -I<source dir>) is fine.
  fs::create_directories(d / "cutlass");
  ASSERT_TRUE(util::write_file_atomic(d / "cutlass" / "cutlass.h", "#pragma once\n"));
  EXPECT_EQ(cutlass_headers_problem(r), "");
  CompileRequest plain;
  plain.source = d / "k.cu";
  EXPECT_EQ(cutlass_headers_problem(plain), "");  // not a CUTLASS request: not checked
  fs::remove_all(d);
}

// Records every command; answers `nvcc --version` and nothing else.
class VersionOnlyRunner : public util::CommandRunner {
 public:
  util::ProcessResult run(const util::ProcessSpec& spec) override {
    calls.push_back(spec.argv);
    util::ProcessResult r;
    r.started = true;
    r.exit_code = 0;
    r.stdout_text = "Cuda compilation tools, release 13.0, V13.0.88\n";
    return r;
  }
  std::vector<std::vector<std::string>> calls;
};

TEST(Cutlass, CompilerFailsACutlassRequestWithoutHeadersBeforeRunningNvcc) {
  for (const char* sys : {"/usr/include/cutlass/cutlass.h", "/usr/local/include/cutlass/cutlass.h",
                          "/usr/local/cuda/include/cutlass/cutlass.h"})
    if (fs::exists(sys)) GTEST_SKIP() << sys << " exists on this machine";
  fs::path d = scratch("compiler");
  ASSERT_TRUE(util::write_file_atomic(d / "k.cu", "#include <cutlass/cutlass.h>\n"));
  CompileRequest r;
  r.name = "k";
  r.source = d / "k.cu";
  r.cache_dir = d / "cache";
  r.out_dir = d / "out";
  apply_cutlass(r, "");
  VersionOnlyRunner runner;
  Compiler compiler(runner, "/fake/nvcc");
  auto res = compiler.compile(r);
  EXPECT_EQ(res.status, CompileStatus::kFailed);
  EXPECT_NE(res.log_text.find("CUTLASS headers not found"), std::string::npos) << res.log_text;
  ASSERT_EQ(runner.calls.size(), 1u);  // only nvcc --version
  EXPECT_EQ(runner.calls[0].back(), "--version");
  EXPECT_TRUE(fs::is_regular_file(d / "out" / "compile.log"));
  fs::remove_all(d);
}

}  // namespace kopt::compile
