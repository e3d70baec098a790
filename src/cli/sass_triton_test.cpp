// `kopt sass KERNEL.py` end to end with the real binary: without a GPU it explains why it cannot JIT (exit
// 3) unless given --lib CUBIN; with --lib it reads the cubins (real nvcc stand-ins, tests/data/triton/).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "device/gpu_info.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/process.h"

namespace kopt::cli {
namespace {

namespace fs = std::filesystem;

const char* kKernel = R"(import triton  # never imported by these tests: --lib reads cubins only
# @kopt param BLOCK_SIZE values=1024,2048 default=1024
# @kopt param num_warps values=4,8 default=4
# @kopt method coalesced_access

def setup(*, seed, n_rows, n_cols):
    pass

def run_kernel(*, x, y, BLOCK_SIZE, num_warps, KOPT_COALESCED_ACCESS):
    if KOPT_COALESCED_ACCESS:
        pass
)";

class CmdSassTriton : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kopt-cmd-sass-triton-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(util::write_file_atomic(dir_ / "kernel.py", kKernel).ok());
    ASSERT_TRUE(util::write_file_atomic(dir_ / "sigs.json", R"({
      "vec4": {"require_any": ["LDG.E.128", "STG.E.128"]},
      "tensor_core": {"require_any": ["HMMA", "HGMMA"]}})").ok());
  }
  void TearDown() override { fs::remove_all(dir_); }
  util::ProcessResult kopt(std::vector<std::string> args) {
    args.insert(args.begin(), {testing_support::kopt_binary(), "sass"});
    return util::run_process({args, dir_.string(), {}, 300});
  }
  bool tools_missing() {
    return !testing_support::sass_tools_present();
  }
  fs::path cubin(const std::string& name) {
    util::ProcessResult r;
    fs::path out = testing_support::compile_test_cubin(name, dir_, &r);
    EXPECT_TRUE(r.success()) << r.stderr_text;
    return out;
  }
  fs::path dir_;
};

TEST_F(CmdSassTriton, WithoutAGpuOrACubinItExplainsTheJit) {
  if (device::query_gpus()) GTEST_SKIP() << "a GPU is present: kopt sass KERNEL.py would run the kernel";
  auto r = kopt({(dir_ / "kernel.py").string(), "--n_rows=4", "--n_cols=8"});
  EXPECT_EQ(r.exit_code, 3) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("compiles at the first launch (JIT), which needs a GPU"), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("--lib CUBIN"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "kopt_runs"));
}

TEST_F(CmdSassTriton, InputErrorsComeFirst) {
  auto missing = kopt({(dir_ / "nope.py").string()});
  EXPECT_EQ(missing.exit_code, 4);
  EXPECT_NE(missing.stderr_text.find("kernel source " + (dir_ / "nope.py").string() + " not found"), std::string::npos) << missing.stderr_text;
  ASSERT_TRUE(util::write_file_atomic(dir_ / "bad.py", "# @kopt param X\ndef setup(*, seed):\n    pass\n"
                                                      "def run_kernel(**kw):\n    pass\n").ok());
  auto bad = kopt({(dir_ / "bad.py").string(), "--lib", "x.cubin"});
  EXPECT_EQ(bad.exit_code, 4);
  EXPECT_NE(bad.stderr_text.find("bad.py:1"), std::string::npos) << bad.stderr_text;
  auto bad_define = kopt({(dir_ / "kernel.py").string(), "-D", "BLOCK_SIZE=big", "--lib", "x.cubin"});
  EXPECT_EQ(bad_define.exit_code, 4);
  EXPECT_NE(bad_define.stderr_text.find("must be an integer"), std::string::npos) << bad_define.stderr_text;
  auto no_cubin = kopt({(dir_ / "kernel.py").string(), "--lib", (dir_ / "x.cubin").string()});
  EXPECT_EQ(no_cubin.exit_code, 4);
  EXPECT_NE(no_cubin.stderr_text.find("no such cubin"), std::string::npos) << no_cubin.stderr_text;
}

TEST_F(CmdSassTriton, ReadsTheGivenCubinsWithTheirOwnKernelNames) {
  if (tools_missing()) GTEST_SKIP() << "nvcc or cuobjdump not found";
  auto a = cubin("row_max"), b = cubin("scale");
  auto r = kopt({(dir_ / "kernel.py").string(), "--lib", a.string(), "--lib", b.string(), "--methods",
                 "vec4,tensor_core", "--signature", (dir_ / "sigs.json").string(), "--json",
                 (dir_ / "report.json").string()});
  EXPECT_EQ(r.exit_code, 2) << r.stdout_text << r.stderr_text;  // tensor_core fails: exit 2 (validation)
  EXPECT_NE(r.stdout_text.find("softmax_kernel"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("scale_kernel"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("vec4             pass"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("tensor_core      fail"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("cubins (2)"), std::string::npos) << r.stdout_text;
  auto j = util::read_json(dir_ / "report.json");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["backend"], "triton");
  // the baseline configuration: the declared method was not asked for, so its guard stays 0
  EXPECT_EQ((*j)["config"], (util::Json{{"BLOCK_SIZE", 1024}, {"num_warps", 4}, {"KOPT_COALESCED_ACCESS", 0}}));
  EXPECT_EQ((*j)["cubins"].size(), 2u);
  EXPECT_EQ((*j)["methods"]["vec4"]["status"], "pass");

  auto only = kopt({(dir_ / "kernel.py").string(), "--lib", b.string(), "--kernel-name", "scale_kernel", "--methods",
                    "vec4", "--signature", (dir_ / "sigs.json").string(), "-D", "BLOCK_SIZE=2048"});
  EXPECT_EQ(only.exit_code, 0) << only.stdout_text << only.stderr_text;
}

}  // namespace
}  // namespace kopt::cli
