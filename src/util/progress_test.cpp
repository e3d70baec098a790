#include "util/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace kopt::util {
namespace {

TEST(Progress, ClockAndEta) {
  EXPECT_EQ(format_clock(0), "0:00");
  EXPECT_EQ(format_clock(7.4), "0:07");
  EXPECT_EQ(format_clock(65), "1:05");
  EXPECT_EQ(format_clock(3723), "1:02:03");
  EXPECT_FALSE(eta_s({"x", 0, 8, 5.0}).has_value()) << "no rate before the first item";
  EXPECT_FALSE(eta_s({"x", 3, 0, 5.0}).has_value()) << "uncounted";
  EXPECT_DOUBLE_EQ(*eta_s({"x", 2, 8, 10.0}), 30.0);
}

TEST(Progress, RendersABarWithCountsAndEta) {
  ProgressView v{"compiling", 2, 8, 10.0, "1 failed"};
  EXPECT_EQ(render_progress(v, ProgressMode::kBar, 60), "compiling [####---------------] 2/8 0:10 ETA 0:30 (1 failed)");
  v.done = 0;
  EXPECT_NE(render_progress(v, ProgressMode::kBar, 60).find("[-------------------] 0/8 0:10 ETA -:--"), std::string::npos);
  ProgressView clock{"golden data", 0, 0, 4.2};
  EXPECT_EQ(render_progress(clock, ProgressMode::kBar), "golden data ... 0:04");
}

TEST(Progress, RendersPlainLinesWhenNotATerminal) {
  ProgressView v{"measuring", 3, 4, 12.0};
  EXPECT_EQ(render_progress(v, ProgressMode::kLines), "measuring: 3/4, 0:12 elapsed, ETA 0:04");
  v.finished = true;
  v.done = 4;
  EXPECT_EQ(render_progress(v, ProgressMode::kLines), "measuring: 4/4 in 0:12");
  ProgressView golden{"golden data", 0, 0, 3.0, "", true};
  EXPECT_EQ(render_progress(golden, ProgressMode::kLines), "golden data: done in 0:03");
}

TEST(Progress, ModeFollowsQuietTheEnvironmentAndTheTerminal) {
  EXPECT_EQ(choose_progress_mode(true, "bar", true), ProgressMode::kQuiet);
  EXPECT_EQ(choose_progress_mode(false, "", true), ProgressMode::kBar);
  EXPECT_EQ(choose_progress_mode(false, "", false), ProgressMode::kLines);
  EXPECT_EQ(choose_progress_mode(false, "lines", true), ProgressMode::kLines);
  EXPECT_EQ(choose_progress_mode(false, "off", true), ProgressMode::kQuiet);
}

std::string captured(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  return s;
}

TEST(Progress, LinesModePrintsAStartAndAnEndLine) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p("compiling", 3, ProgressMode::kLines, f);
    p.set(1);
    p.set(3);
  }
  std::string out = captured(f);
  EXPECT_EQ(out.rfind("compiling: 0/3\n", 0), 0u) << out;
  EXPECT_NE(out.find("compiling: 3/3 in 0:00\n"), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << "no carriage returns off a terminal";
  std::fclose(f);
}

TEST(Progress, BarModeRedrawsInPlaceAndQuietPrintsNothing) {
  std::FILE* f = std::tmpfile();
  {
    Progress p("measuring", 2, ProgressMode::kBar, f);
    p.note("c1 ok");
    p.set(2);
  }
  std::string out = captured(f);
  EXPECT_NE(out.find("\rmeasuring ["), std::string::npos) << out;
  EXPECT_NE(out.find("c1 ok\n"), std::string::npos) << out;
  EXPECT_NE(out.find("measuring: 2/2 in 0:00\x1b[K\n"), std::string::npos) << out;
  std::fclose(f);
  std::FILE* q = std::tmpfile();
  { Progress p("quiet", 2, ProgressMode::kQuiet, q); p.set(2); }
  EXPECT_EQ(captured(q), "");
  std::fclose(q);
}

}  // namespace
}  // namespace kopt::util
