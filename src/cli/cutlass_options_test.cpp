// --cutlass-include on the kernel commands and on `kopt sass`: the real binary, option parsing only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "cli/kernel_options.h"
#include "testing/test_support.h"
#include "util/fs.h"
#include "util/process.h"

namespace kopt::cli {
namespace {

namespace fs = std::filesystem;

util::ProcessResult kopt(std::vector<std::string> args) {
  args.insert(args.begin(), testing_support::kopt_binary());
  return util::run_process({args, "", {}, 120});
}

TEST(CutlassOptions, AFolderWithoutCutlassHeadersIsAnInputError) {
  fs::path d = fs::temp_directory_path() / ("kopt-cutlass-opt-" + std::to_string(::getpid()));
  fs::create_directories(d);
  ASSERT_TRUE(util::write_file_atomic(d / "k.cu", "extern \"C\" void solve(float* x, int n) {}\n"));
  ASSERT_TRUE(util::write_file_atomic(d / "ref.py", "def reference(*, x, n):\n    pass\n"));
  for (const std::string cmd : {"bench", "profile", "roofline"}) {
    auto r = kopt({cmd, (d / "k.cu").string(), "--ref", (d / "ref.py").string(), "--cutlass-include", d.string(), "--n=4"});
    EXPECT_EQ(r.exit_code, 4) << cmd << ": " << r.stdout_text << r.stderr_text;
    EXPECT_NE(r.stderr_text.find("holds no cutlass/cutlass.h"), std::string::npos) << cmd << ": " << r.stderr_text;
  }
  auto s = kopt({"sass", (d / "k.cu").string(), "--cutlass-include", d.string()});
  EXPECT_EQ(s.exit_code, 4) << s.stderr_text;
  EXPECT_NE(s.stderr_text.find("holds no cutlass/cutlass.h"), std::string::npos) << s.stderr_text;

  // A CUTLASS tree (the folder holding include/cutlass/cutlass.h) is accepted: parsing goes on to the next
  // problem, the missing library.
  fs::create_directories(d / "tree" / "include" / "cutlass");
  ASSERT_TRUE(util::write_file_atomic(d / "tree" / "include" / "cutlass" / "cutlass.h", "#pragma once\n"));
  auto ok = kopt({"sass", "--lib", (d / "missing.so").string(), "--cutlass-include", (d / "tree").string()});
  EXPECT_EQ(ok.exit_code, 4) << ok.stderr_text;
  EXPECT_NE(ok.stderr_text.find("no such library"), std::string::npos) << ok.stderr_text;
  fs::remove_all(d);
}

TEST(CutlassOptions, CutlassIncludeAppendsAfterTheOtherIncludeDirsAndMarksTheJob) {
  fs::path d = fs::temp_directory_path() / ("kopt-cutlass-job-" + std::to_string(::getpid()));
  fs::create_directories(d / "tree" / "include" / "cutlass");
  ASSERT_TRUE(util::write_file_atomic(d / "tree" / "include" / "cutlass" / "cutlass.h", "#pragma once\n"));
  ASSERT_TRUE(util::write_file_atomic(d / "k.cu", "extern \"C\" void solve(float* x, int n) {}\n"));
  ASSERT_TRUE(util::write_file_atomic(d / "ref.py", "def reference(*, x, n):\n    pass\n"));
  pipeline::KernelJob job;
  KernelOptionValues v;
  CLI::App app;
  add_kernel_options(app, job, v);
  app.allow_extras();
  std::vector<std::string> argv = {(d / "k.cu").string(), "--ref", (d / "ref.py").string(), "--cutlass-include",
                                   (d / "tree").string(), "-I", "/first"};
  std::reverse(argv.begin(), argv.end());  // CLI11 takes them reversed
  app.parse(argv);
  ASSERT_TRUE(finish_kernel_job(job, v, Dims{{"n", 4}}));
  EXPECT_TRUE(job.cutlass);
  EXPECT_EQ(job.include_dirs,
            (std::vector<std::string>{"/first", (d / "tree" / "include").lexically_normal().string()}));
  pipeline::KernelJob plain;
  KernelOptionValues pv;
  pv.kernel = (d / "k.cu").string();
  pv.ref = (d / "ref.py").string();
  ASSERT_TRUE(finish_kernel_job(plain, pv, Dims{{"n", 4}}));
  EXPECT_FALSE(plain.cutlass);
  fs::remove_all(d);
}

}  // namespace
}  // namespace kopt::cli
