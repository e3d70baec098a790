#include "util/output.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "util/fs.h"

namespace kopt::util {
namespace {

TEST(Output, DashIsStdoutAndMovesTheReportToStderr) {
  EXPECT_TRUE(is_stdout_path("-"));
  EXPECT_FALSE(is_stdout_path("out.json"));
  EXPECT_EQ(report_stream("", ""), stdout);
  EXPECT_EQ(report_stream("out.json", ""), stdout);
  EXPECT_EQ(report_stream("-", ""), stderr);
  EXPECT_EQ(report_stream("", "-"), stderr);
}

TEST(Output, WritesAFileWithAMetaBlockOrStdout) {
  auto path = std::filesystem::temp_directory_path() / ("kopt-output-" + std::to_string(::getpid()) + ".json");
  ASSERT_TRUE(write_json_output(path.string(), "check", {{"status", "ok"}}).ok());
  auto j = read_json(path);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["meta"]["kind"], "check");
  EXPECT_EQ((*j)["status"], "ok");
  std::filesystem::remove(path);
  ::testing::internal::CaptureStdout();
  ASSERT_TRUE(write_json_output("-", "check", {{"status", "ok"}}).ok());
  auto printed = Json::parse(::testing::internal::GetCapturedStdout());
  EXPECT_EQ(printed["meta"]["kind"], "check");
  EXPECT_TRUE(write_json_output("", "check", {}).ok()) << "an empty path writes nothing";
}

TEST(Output, CsvCells) {
  EXPECT_EQ(csv_cell("plain"), "plain");
  EXPECT_EQ(csv_cell("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
}

}  // namespace
}  // namespace kopt::util
