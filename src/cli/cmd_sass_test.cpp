// `kopt sass` end to end: the real binary, nvcc and cuobjdump (skips where the tools are missing).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/process.h"

namespace kopt::cli {
namespace {

namespace fs = std::filesystem;

class CmdSass : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kopt-cmd-sass-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(util::write_file_atomic(dir_ / "sigs.json", R"({
      "vec4": {"require_any": ["LDG.E.128", "STG.E.128"]},
      "no_spills": {"forbid": ["LDL", "STL"]},
      "tensor_core": {"require_any": ["HMMA", "HGMMA"]}})")
                    .ok());
  }
  void TearDown() override { fs::remove_all(dir_); }
  util::ProcessResult kopt(std::vector<std::string> args) {
    args.insert(args.begin(), {testing_support::kopt_binary(), "sass"});
    return util::run_process({args, "", {{"KOPT_CACHE_DIR", (dir_ / "cache").string()}}, 300});
  }
  static std::string kernel(const std::string& name) {
    return testing_support::test_data_dir() + "/compile/kernels/" + name;
  }
  static bool tools_missing() {
    return !testing_support::sass_tools_present();
  }
  fs::path dir_;
};

TEST_F(CmdSass, InputErrorsComeBeforeAnyCompile) {
  auto none = kopt({});
  EXPECT_EQ(none.exit_code, 4);
  EXPECT_NE(none.stderr_text.find("give a kernel source"), std::string::npos) << none.stderr_text;
  auto missing = kopt({(dir_ / "nope.cu").string()});
  EXPECT_EQ(missing.exit_code, 4);
  fs::create_directories(dir_ / "folder.cu");
  auto folder = kopt({(dir_ / "folder.cu").string()});
  EXPECT_EQ(folder.exit_code, 4);
  EXPECT_NE(folder.stderr_text.find("is a directory"), std::string::npos) << folder.stderr_text;
  auto unknown = kopt({kernel("vec4.cu"), "--methods", "warp_specialize", "--signature", (dir_ / "sigs.json").string()});
  EXPECT_EQ(unknown.exit_code, 4);
  EXPECT_NE(unknown.stderr_text.find("no signature for method 'warp_specialize'"), std::string::npos)
      << unknown.stderr_text;
  auto no_registry = kopt({kernel("vec4.cu"), "--methods", "vec4"});
  EXPECT_EQ(no_registry.exit_code, 4);
  EXPECT_NE(no_registry.stderr_text.find("--signature"), std::string::npos) << no_registry.stderr_text;
  EXPECT_FALSE(fs::exists(dir_ / "cache"));
}

TEST_F(CmdSass, ReportsResourcesMixAndVerdicts) {
  if (tools_missing()) GTEST_SKIP() << "nvcc or cuobjdump not found";
  auto r = kopt({kernel("vec4.cu"), "--methods", "vec4,no_spills", "--signature", (dir_ / "sigs.json").string(),
                 "--json", (dir_ / "report.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("kernel copy_vec4(float4 const*, float4*, int)  [sm_90]"), std::string::npos)
      << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("14 registers"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("LDG.128"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("vec4             pass"), std::string::npos) << r.stdout_text;

  auto j = util::read_json(dir_ / "report.json");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["meta"]["kind"], "sass");
  EXPECT_EQ((*j)["methods"]["vec4"]["status"], "pass");
  EXPECT_EQ((*j)["methods"]["no_spills"]["status"], "pass");
  EXPECT_EQ((*j)["kernels"][0]["instruction_mix"]["LDG.128"], 1);
  EXPECT_EQ((*j)["kernels"][0]["resources"]["registers"], 14);
  std::string library = (*j)["library"];

  // The same library read back with --lib: resources come from cuobjdump; a failing method gives exit 2.
  auto lib = kopt({"--lib", library, "--kernel-name", "copy_vec4", "--methods", "tensor_core", "--signature",
                   (dir_ / "sigs.json").string()});
  EXPECT_EQ(lib.exit_code, 2) << lib.stdout_text << lib.stderr_text;
  EXPECT_NE(lib.stdout_text.find("tensor_core      fail"), std::string::npos) << lib.stdout_text;
  EXPECT_NE(lib.stdout_text.find("14 registers"), std::string::npos) << lib.stdout_text;  // cuobjdump REG:14
}

TEST_F(CmdSass, CompileOnlyFillsTheCacheAndNamesTheLibrary) {
  if (tools_missing()) GTEST_SKIP() << "nvcc or cuobjdump not found";
  auto r = kopt({kernel("vec4.cu"), "--compile-only", "-DUNUSED=3", "--json", (dir_ / "c.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  auto j = util::read_json(dir_ / "c.json");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["meta"]["kind"], "sass_compile");
  std::string library = (*j)["library"];
  EXPECT_EQ(r.stdout_text, "library: " + library + "\n");  // no SASS report
  EXPECT_TRUE(fs::is_regular_file(library));
  EXPECT_EQ(fs::path(library).string().rfind((dir_ / "cache").string(), 0), 0u) << library;
  EXPECT_EQ((*j)["compile"]["status"], "ok");
  // A second time it is a cache hit, the same library.
  auto again = kopt({kernel("vec4.cu"), "--compile-only", "-DUNUSED=3"});
  EXPECT_EQ(again.stdout_text, r.stdout_text);
  EXPECT_EQ(kopt({"--lib", library, "--compile-only"}).exit_code, 4);
}

TEST_F(CmdSass, ACompileErrorShowsTheLog) {
  if (tools_missing()) GTEST_SKIP() << "nvcc or cuobjdump not found";
  ASSERT_TRUE(util::write_file_atomic(dir_ / "bad.cu", "__global__ void k( { }\n").ok());
  auto r = kopt({(dir_ / "bad.cu").string()});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.stderr_text.find("error"), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("compile failed"), std::string::npos) << r.stderr_text;
  // The message says where the log is kept, and the file is there.
  auto at = r.stderr_text.find("its log is kept in ");
  ASSERT_NE(at, std::string::npos) << r.stderr_text;
  std::string log = r.stderr_text.substr(at + 19);
  log = log.substr(0, log.find('\n'));
  EXPECT_TRUE(fs::is_regular_file(log)) << log;
  if (log.rfind(dir_.string(), 0) != 0) fs::remove(log);  // kept outside the test's folder: not left behind
}

TEST_F(CmdSass, AKernelNameThatMatchesNothingIsAnErrorNamingTheKernelsPresent) {
  if (tools_missing()) GTEST_SKIP() << "nvcc or cuobjdump not found";
  auto r = kopt({kernel("vec4.cu"), "--kernel-name", "missing_kernel"});
  EXPECT_EQ(r.exit_code, 4) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("--kernel-name missing_kernel: no function of "), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("copy_vec4"), std::string::npos) << "names the kernels present: " << r.stderr_text;
  auto json = kopt({kernel("vec4.cu"), "--kernel-name", "missing_kernel", "--json", "-"});
  EXPECT_EQ(json.exit_code, 4);
  auto j = util::Json::parse(json.stdout_text);
  EXPECT_EQ(j["error"]["kind"], "input");
  EXPECT_NE(j["error"]["message"].get<std::string>().find("copy_vec4"), std::string::npos) << json.stdout_text;
}

}  // namespace
}  // namespace kopt::cli
