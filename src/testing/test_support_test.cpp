#include "testing/test_support.h"

#include <gtest/gtest.h>

namespace kopt::testing_support {
namespace {

TEST(TestSupport, ATestProcessRecognisesOnlyTheTempNamesItMade) {
  EXPECT_TRUE(made_by_process("kopt_loop_race_12345", 12345));
  EXPECT_TRUE(made_by_process("kopt_gates_shapes_12345.txt", 12345));
  EXPECT_TRUE(made_by_process("kopt_session_echo_12345_2", 12345));
  EXPECT_FALSE(made_by_process("kopt_loop_race_123456", 12345)) << "another pid that starts with this one";
  EXPECT_FALSE(made_by_process("kopt_loop_race_1234", 12345));
  EXPECT_FALSE(made_by_process("pytest-of-root_12345", 12345)) << "only kopt's";
  EXPECT_FALSE(made_by_process("kopt_cmake_install", 12345));
}

}  // namespace
}  // namespace kopt::testing_support
