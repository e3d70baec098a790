// analyze_binaries on real cubins: nvcc -cubin builds stand-ins for Triton's cubins (one extern "C" kernel
// each, tests/data/triton/), the real cuobjdump reads them. Skips where nvcc or cuobjdump is missing.
#include "sass/binaries.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "testing/test_support.h"
#include "toolchain/tools.h"

namespace kopt::sass {
namespace {

namespace fs = std::filesystem;

class SassBinaries : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing_support::sass_tools_present()) GTEST_SKIP() << "nvcc or cuobjdump not found";
    dir_ = fs::temp_directory_path() / ("kopt-sass-binaries-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path cubin(const std::string& name) {
    util::ProcessResult r;
    fs::path out = testing_support::compile_test_cubin(name, dir_, &r);
    EXPECT_TRUE(r.success()) << r.stderr_text;
    return out;
  }
  fs::path dir_;
};

TEST_F(SassBinaries, EveryFunctionOfEveryCubinWhenNoNameIsGiven) {
  util::SystemRunner runner;
  auto a = analyze_binaries({cubin("row_max"), cubin("scale")}, {}, "", runner);
  ASSERT_TRUE(a.tool_error.empty()) << a.tool_error;
  EXPECT_EQ(a.binary.filename(), "row_max.cubin");
  EXPECT_EQ(a.wanted, (std::vector<std::string>{"softmax_kernel", "scale_kernel"}));
  ASSERT_EQ(a.selected.size(), 2u);
  EXPECT_EQ(a.functions[a.selected[0]].mangled, "softmax_kernel");
  EXPECT_EQ(a.functions[a.selected[0]].arch, "sm_90");
  EXPECT_EQ(a.functions[a.selected[1]].mangled, "scale_kernel");
  EXPECT_TRUE(a.unmatched.empty());
  // Verification sees both: the 128-bit loads of scale_kernel, the shared memory of softmax_kernel.
  auto vec = verify_method(a, Signature{{"LDG.E.128"}, {}, {}, {}});
  ASSERT_TRUE(vec.ok()) << vec.error().message;
  EXPECT_EQ(vec->status, VerifyStatus::kPass);
  auto smem = verify_method(a, Signature{{"STS"}, {}, {}, {}});
  ASSERT_TRUE(smem.ok());
  EXPECT_EQ(smem->status, VerifyStatus::kPass);
}

TEST_F(SassBinaries, NamesAndArchRestrictTheSelection) {
  util::SystemRunner runner;
  auto bins = std::vector<fs::path>{cubin("row_max"), cubin("scale")};
  auto one = analyze_binaries(bins, {"scale_kernel", "missing_kernel"}, "", runner);
  ASSERT_EQ(one.selected.size(), 1u);
  EXPECT_EQ(one.functions[one.selected[0]].mangled, "scale_kernel");
  EXPECT_EQ(one.unmatched, std::vector<std::string>{"missing_kernel"});
  auto other_arch = analyze_binaries(bins, {}, "sm_80", runner);
  EXPECT_TRUE(other_arch.selected.empty());
  auto v = verify_method(other_arch, Signature{{"LDG.E.128"}, {}, {}, {}});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->status, VerifyStatus::kInconclusive);
}

TEST_F(SassBinaries, AnUnreadableBinaryIsAToolError) {
  util::SystemRunner runner;
  ASSERT_TRUE(util::write_file_atomic(dir_ / "junk.cubin", "not an ELF file").ok());
  auto a = analyze_binaries({cubin("scale"), dir_ / "junk.cubin"}, {}, "", runner);
  EXPECT_FALSE(a.tool_error.empty());
}

}  // namespace
}  // namespace kopt::sass

namespace kopt::sass {
namespace {

// A real cubin Triton 3.6 compiled on the H200 (2026-11-30) for examples/triton_softmax (BLOCK_SIZE=4096,
// num_warps=8): tests/data/triton/h200/softmax_kernel.cubin.
TEST(SassTritonCubin, TheRealSoftmaxCubinShowsItsVectorLoadsAndShuffles) {
  if (!testing_support::executable(toolchain::find_cuobjdump())) GTEST_SKIP() << "cuobjdump not found";
  util::SystemRunner runner;
  const std::filesystem::path bin = testing_support::test_data_dir() + "/triton/h200/softmax_kernel.cubin";
  auto a = analyze_binaries({bin}, {}, "", runner);
  ASSERT_TRUE(a.tool_error.empty()) << a.tool_error;
  ASSERT_EQ(a.selected.size(), 1u);
  const auto& f = a.functions[a.selected[0]];
  EXPECT_EQ(f.mangled, "softmax_kernel");
  EXPECT_EQ(f.arch, "sm_90a");
  auto vec = verify_method(a, Signature{{"LDG.E.128"}, {}, {}, {}});
  ASSERT_TRUE(vec.ok()) << vec.error().message;
  EXPECT_EQ(vec->status, VerifyStatus::kPass);
  auto tensor = verify_method(a, Signature{{"HGMMA", "HMMA"}, {}, {}, {}});  // a softmax has no matrix product
  ASSERT_TRUE(tensor.ok());
  EXPECT_EQ(tensor->status, VerifyStatus::kFail);
}

}  // namespace
}  // namespace kopt::sass
