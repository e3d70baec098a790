#include "util/process.h"

#include <gtest/gtest.h>

namespace kopt::util {

TEST(Process, CapturesOutputAndExitCode) {
  auto r = run_process({{"sh", "-c", "echo out; echo err >&2; exit 3"}});
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.stdout_text, "out\n");
  EXPECT_EQ(r.stderr_text, "err\n");
  EXPECT_FALSE(r.success());
  EXPECT_EQ(r.describe(), "exit 3");
}

TEST(Process, StdinIsEmptyAndEnvIsPassed) {
  auto r = run_process({{"sh", "-c", "cat; echo \"$KOPT_X\""}, "", {{"KOPT_X", "hello"}}});
  EXPECT_TRUE(r.success());
  EXPECT_EQ(r.stdout_text, "hello\n");
}

TEST(Process, TimeoutKillsTheWholeGroup) {
  // The child starts a grandchild that would outlive it; both must die within the timeout + grace.
  auto r = run_process({{"sh", "-c", "sleep 30 & sleep 30; echo never"}, "", {}, 0.5});
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.success());
  EXPECT_LT(r.wall_ms, 5000);
  EXPECT_EQ(r.stdout_text.find("never"), std::string::npos);
}

TEST(Process, ReportsASignalDeath) {
  auto r = run_process({{"sh", "-c", "kill -SEGV $$"}});
  EXPECT_EQ(r.term_signal, 11);
  EXPECT_EQ(r.describe(), "killed by SIGSEGV");
}

TEST(Process, MissingProgramIsAStartError) {
  auto r = run_process({{"/nonexistent/kopt-no-such-tool"}});
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.start_error.find("No such file"), std::string::npos) << r.start_error;
}

TEST(Process, FindInPath) {
  EXPECT_FALSE(find_in_path("sh").empty());
  EXPECT_TRUE(find_in_path("kopt-surely-not-a-program").empty());
}

}  // namespace kopt::util
