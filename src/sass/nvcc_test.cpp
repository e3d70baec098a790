// Integration: real nvcc builds real kernels, the real cuobjdump reads them, signatures are verified.
// Skips (GTEST_SKIP) where nvcc or cuobjdump is missing. Each compile takes about a second.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "compile/pool.h"
#include "sass/analysis.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"

namespace kopt::sass {
namespace {

namespace fs = std::filesystem;
using compile::CompileRequest;
using compile::CompileResult;

fs::path kernel(const std::string& name) { return fs::path(testing_support::test_data_dir()) / "compile" / "kernels" / name; }

bool tools_missing() {
  return !testing_support::sass_tools_present();
}

// CTest runs each test in its own process, so each test compiles only the kernels it reads (memoized within
// the process, in a private build cache).
class SassNvcc : public ::testing::Test {
 protected:
  static void TearDownTestSuite() {
    if (root_) fs::remove_all(*root_);
    delete root_;
    delete built_;
    root_ = nullptr;
    built_ = nullptr;
  }
  void SetUp() override {
    if (tools_missing()) GTEST_SKIP() << "nvcc or cuobjdump not found";
    if (!root_) {
      root_ = new fs::path(fs::temp_directory_path() / ("kopt-sass-nvcc-" + std::to_string(::getpid())));
      fs::remove_all(*root_);
      built_ = new std::map<std::string, CompileResult>;
    }
  }
  static CompileRequest request(const std::string& name) {
    CompileRequest r;
    r.name = name;
    r.source = kernel(name + ".cu");
    r.cache_dir = *root_ / "cache";
    r.out_dir = *root_ / "out" / name;
    if (name == "spill") r.extra_flags = {"-maxrregcount=32"};
    return r;
  }
  // Compiles the named kernels not built yet, in one parallel batch.
  static void build(const std::vector<std::string>& names) {
    std::vector<CompileRequest> reqs;
    for (const auto& n : names)
      if (!built_->count(n)) reqs.push_back(request(n));
    util::SystemRunner runner;
    for (auto& r : compile::compile_batch(reqs, {0, ""}, runner)) (*built_)[r.name] = std::move(r);
  }
  static const CompileResult& built(const std::string& name) {
    build({name});
    return built_->at(name);
  }
  static Verification verdict(const std::string& name, const Signature& sig) {
    const auto& r = built(name);
    EXPECT_TRUE(r.ok()) << r.log_text;
    util::SystemRunner runner;
    auto a = analyze(r.library, kernel_names_from_source(kernel(name + ".cu")), "", runner);
    EXPECT_TRUE(a.tool_error.empty()) << a.tool_error;
    EXPECT_EQ(a.selected.size(), 1u) << name;
    auto v = verify_method(a, sig);
    EXPECT_TRUE(v.ok());
    return v ? *v : Verification{};
  }

  static fs::path* root_;
  static std::map<std::string, CompileResult>* built_;
};
fs::path* SassNvcc::root_ = nullptr;
std::map<std::string, CompileResult>* SassNvcc::built_ = nullptr;

TEST_F(SassNvcc, Float4PassesVectorizedAndScalarFails) {
  Signature vectorized;
  vectorized.require_any = {"LDG.E.128", "STG.E.128"};
  build({"vec4", "scalar"});
  auto pass = verdict("vec4", vectorized);
  EXPECT_EQ(pass.status, VerifyStatus::kPass) << pass.message;
  ASSERT_FALSE(pass.checks.empty());
  ASSERT_FALSE(pass.checks[0].examples.empty());
  EXPECT_EQ(pass.checks[0].examples[0].function, "copy_vec4(float4 const*, float4*, int)");
  auto fail = verdict("scalar", vectorized);
  EXPECT_EQ(fail.status, VerifyStatus::kFail) << fail.message;
}

TEST_F(SassNvcc, CpAsyncPassesAsyncCopy) {
  Signature async_copy;
  async_copy.require_all = {"LDGSTS"};
  build({"cp_async", "vec4"});
  auto v = verdict("cp_async", async_copy);
  EXPECT_EQ(v.status, VerifyStatus::kPass) << v.message;
  EXPECT_EQ(verdict("vec4", async_copy).status, VerifyStatus::kFail);
}

TEST_F(SassNvcc, WmmaPassesTensorCore) {
  Signature tensor;
  tensor.require_any = {"HMMA", "HGMMA"};
  build({"wmma", "scalar"});
  auto v = verdict("wmma", tensor);
  EXPECT_EQ(v.status, VerifyStatus::kPass) << v.message;
  EXPECT_EQ(verdict("scalar", tensor).status, VerifyStatus::kFail);
}

TEST_F(SassNvcc, SpillingKernelFailsNoSpillsAndReportsSpillBytes) {
  Signature no_spills;
  no_spills.forbid = {"LDL", "STL"};
  build({"spill", "vec4"});
  auto v = verdict("spill", no_spills);
  EXPECT_EQ(v.status, VerifyStatus::kFail) << v.message;
  EXPECT_NE(v.message.find("forbidden STL appears"), std::string::npos) << v.message;
  const auto& r = built("spill");
  ASSERT_EQ(r.resources.size(), 1u);
  EXPECT_EQ(r.resources[0].registers, 32);
  EXPECT_TRUE(r.resources[0].spills());
  EXPECT_GT(r.resources[0].spill_store_bytes.value_or(0), 0);
  EXPECT_EQ(verdict("vec4", no_spills).status, VerifyStatus::kPass);
}

TEST_F(SassNvcc, ExplicitNamesAndNothingToCheck) {
  util::SystemRunner runner;
  auto a = analyze(built("vec4").library, {"not_a_kernel"}, "", runner);
  ASSERT_TRUE(a.tool_error.empty());
  EXPECT_EQ(a.unmatched, std::vector<std::string>{"not_a_kernel"});
  Signature s;
  s.require_all = {"LDG"};
  auto v = verify_method(a, s);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->status, VerifyStatus::kInconclusive);
  EXPECT_NE(v->message.find("copy_vec4"), std::string::npos) << v->message;

  auto missing_tool = analyze(built("vec4").library, {"copy_vec4"}, "", runner, {"/nonexistent/cuobjdump", 10});
  auto t = verify_method(missing_tool, s);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->status, VerifyStatus::kToolError);
}

// A second compile of the same candidate hits the cache; changing a local header misses it.
TEST_F(SassNvcc, BuildCacheHitsAndHeaderChangesMiss) {
  fs::path dir = *root_ / "cached";
  ASSERT_TRUE(util::write_file_atomic(dir / "params.h", "#define SCALE 2.0f\n").ok());
  ASSERT_TRUE(util::write_file_atomic(dir / "k.cu", "#include \"params.h\"\n"
                                                    "__global__ void scale(float* x) { x[threadIdx.x] *= SCALE; }\n")
                  .ok());
  CompileRequest r;
  r.name = "cached";
  r.source = dir / "k.cu";
  r.cache_dir = *root_ / "cache";
  r.out_dir = dir / "out";
  util::SystemRunner runner;
  auto first = compile::compile_batch({r}, {1, ""}, runner).at(0);
  ASSERT_TRUE(first.ok()) << first.log_text;
  EXPECT_FALSE(first.cache_hit);
  auto second = compile::compile_batch({r}, {1, ""}, runner).at(0);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.cache_key, first.cache_key);
  EXPECT_LT(second.compile_ms, first.compile_ms);
  EXPECT_EQ(second.resources.size(), first.resources.size());

  ASSERT_TRUE(util::write_file_atomic(dir / "params.h", "#define SCALE 3.0f\n").ok());
  auto third = compile::compile_batch({r}, {1, ""}, runner).at(0);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(third.cache_hit);
  EXPECT_NE(third.cache_key, first.cache_key);
}

TEST_F(SassNvcc, ArchSpecificTargetUsesGencode) {
  CompileRequest r;
  r.name = "setmaxnreg";
  r.source = kernel("setmaxnreg.cu");
  r.arch = "sm_90a";
  r.cache_dir = *root_ / "cache";
  util::SystemRunner runner;
  auto res = compile::compile_batch({r}, {1, ""}, runner).at(0);
  EXPECT_TRUE(res.ok()) << res.log_text;
  EXPECT_NE(res.log_text.find("-gencode=arch=compute_90a,code=sm_90a"), std::string::npos);
  ASSERT_FALSE(res.resources.empty());
  EXPECT_EQ(res.resources[0].arch, "sm_90a");
}

TEST_F(SassNvcc, FailedCompileKeepsItsLogAndTheBatchGoesOn) {
  fs::path dir = *root_ / "broken";
  ASSERT_TRUE(util::write_file_atomic(dir / "bad.cu", "__global__ void k( { }\n").ok());
  CompileRequest bad;
  bad.name = "bad";
  bad.source = dir / "bad.cu";
  bad.cache_dir = *root_ / "cache";
  bad.out_dir = dir / "out";
  CompileRequest good = bad;
  good.name = "good";
  good.source = kernel("scalar.cu");
  good.out_dir = dir / "out-good";
  util::SystemRunner runner;
  auto res = compile::compile_batch({bad, good}, {2, ""}, runner);
  EXPECT_EQ(res[0].status, compile::CompileStatus::kFailed);
  auto log = util::read_file(dir / "out" / "compile.log");
  ASSERT_TRUE(log.ok());
  EXPECT_NE(log->find("error"), std::string::npos) << *log;
  EXPECT_EQ(res[1].status, compile::CompileStatus::kOk) << res[1].log_text;
}

}  // namespace
}  // namespace kopt::sass
