// kopt optimize's gate options (issue 18): every bad value is an input error (exit 4) before any GPU work.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/commands.h"
#include "testing/test_support.h"

namespace kopt::cli {

namespace {

int optimize_with(std::vector<std::string> extra, std::string* err) {
  const std::string ex = testing_support::source_dir() + "/examples/vector_add/";
  Args args = {ex + "kernel.cu", "--ref", ex + "ref.py", "--n=1000", "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  ::testing::internal::CaptureStderr();
  int rc = cmd_optimize(args);
  *err = ::testing::internal::GetCapturedStderr();
  return rc;
}

}  // namespace

TEST(OptimizeGateOptions, BadValuesAreInputErrorsBeforeAnyGpuWork) {
  std::string err;
  EXPECT_EQ(optimize_with({"--workload-matrix", "on"}, &err), 4);
  EXPECT_NE(err.find("--workload-matrix must be default or off, not 'on'"), std::string::npos) << err;
  EXPECT_EQ(optimize_with({"--sanitize", "sometimes"}, &err), 4);
  EXPECT_NE(err.find("--sanitize must be auto, finalists, all or off"), std::string::npos) << err;
  EXPECT_EQ(optimize_with({"--champion-gates", "sometimes"}, &err), 4);
  EXPECT_NE(err.find("--champion-gates must be final or each, not 'sometimes'"), std::string::npos) << err;
  EXPECT_EQ(optimize_with({"--max-working-set-mb", "-5"}, &err), 4);
  EXPECT_NE(err.find("--max-working-set-mb"), std::string::npos) << err;
  auto path = std::filesystem::temp_directory_path() / "kopt_cmd_optimize_shapes.txt";
  std::ofstream(path) << "n=4096\n# a comment\nn=512 m=3\n";
  EXPECT_EQ(optimize_with({"--shapes", path.string()}, &err), 4);
  EXPECT_NE(err.find(path.string() + ":3: unknown dimension 'm' (the kernel's dimensions are n)"), std::string::npos) << err;
  EXPECT_EQ(optimize_with({"--holdout-shapes", path.string() + ".missing"}, &err), 4);
  EXPECT_NE(err.find("cannot be read"), std::string::npos) << err;
  std::filesystem::remove(path);
}

}  // namespace kopt::cli
