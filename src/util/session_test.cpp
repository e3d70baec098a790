#include "util/session.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "util/fs.h"

namespace kopt::util {
namespace {

namespace fs = std::filesystem;

fs::path log_path(const std::string& name) {
  return fs::path(::testing::TempDir()) / ("kopt_session_" + name + "_" + std::to_string(::getpid()) + ".log");
}

TEST(Session, AnswersOneLinePerRequestAndKeepsItsStderrInTheLog) {
  auto log = log_path("echo");
  auto s = Session::start({{"bash", "-c", "while read -r l; do echo \"noise $l\" >&2; echo \"got $l\"; done"}}, log);
  ASSERT_TRUE(s.ok()) << s.error().message;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*s)->send("r" + std::to_string(i)).ok());
    auto r = (*s)->receive(10);
    ASSERT_EQ(r.kind, Session::ReplyKind::kLine) << r.how;
    EXPECT_EQ(r.line, "got r" + std::to_string(i));
  }
  (*s)->kill();
  EXPECT_FALSE((*s)->alive());
  auto text = read_file(log);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("noise r2"), std::string::npos);
}

TEST(Session, AChildThatHangsIsKilledAtTheTimeoutWithItsGroup) {
  auto s = Session::start({{"bash", "-c", "read -r l; sleep 30 & wait"}}, log_path("hang"));
  ASSERT_TRUE(s.ok());
  pid_t pid = (*s)->pid();
  ASSERT_TRUE((*s)->send("go").ok());
  auto r = (*s)->receive(0.3);
  EXPECT_EQ(r.kind, Session::ReplyKind::kTimeout);
  EXPECT_FALSE((*s)->alive());
  // The sleeping grandchild was killed with the group; it is gone once init has reaped it.
  bool gone = false;
  for (int i = 0; i < 300 && !gone; ++i) {
    gone = ::kill(-pid, 0) != 0;
    if (!gone) ::usleep(10000);
  }
  EXPECT_TRUE(gone) << "the whole group is gone, the sleeping grandchild too";
}

TEST(Session, AChildThatDiesSaysHow) {
  auto s = Session::start({{"bash", "-c", "read -r l; kill -SEGV $$"}}, log_path("dies"));
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->send("go").ok());
  auto r = (*s)->receive(10);
  EXPECT_EQ(r.kind, Session::ReplyKind::kDied);
  EXPECT_EQ(r.how, "killed by SIGSEGV");
  EXPECT_FALSE((*s)->alive());
  auto exits = Session::start({{"bash", "-c", "exit 3"}}, log_path("exits"));
  ASSERT_TRUE(exits.ok());
  auto e = (*exits)->receive(10);
  EXPECT_EQ(e.kind, Session::ReplyKind::kDied);
  EXPECT_EQ(e.how, "exit 3");
}

TEST(Session, AProgramThatDoesNotExistIsAnErrorAtStart) {
  auto s = Session::start({{"/nonexistent/kopt-worker"}}, log_path("missing"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("/nonexistent/kopt-worker"), std::string::npos);
}

}  // namespace
}  // namespace kopt::util
