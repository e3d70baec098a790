#include "util/unix_socket.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "util/session.h"

namespace kopt::util {
namespace {

namespace fs = std::filesystem;

TEST(UnixSocket, OneLineEachWayAndAClosedPeerIsSeen) {
  const fs::path path = fs::temp_directory_path() / ("kopt_sock_" + std::to_string(::getpid()));
  fs::remove(path);
  auto listener = listen_unix(path);
  ASSERT_TRUE(listener.ok()) << listener.error().message;
  EXPECT_FALSE(listen_unix(path).ok()) << "a name in use is not taken over";
  std::thread client([&] {
    auto fd = connect_unix(path);
    ASSERT_TRUE(fd.ok());
    ASSERT_TRUE(send_line(fd->get(), "hello").ok());
    std::string reply;
    EXPECT_EQ(read_line(fd->get(), 5, &reply), LineStatus::kLine);
    EXPECT_EQ(reply, "world");
  });
  Fd c = accept_unix(listener->get(), 5000);
  ASSERT_TRUE(c);
  std::string line;
  EXPECT_EQ(read_line(c.get(), 5, &line), LineStatus::kLine);
  EXPECT_EQ(line, "hello");
  ASSERT_TRUE(send_line(c.get(), "world").ok());
  client.join();
  EXPECT_TRUE(peer_gone(c.get()));
  EXPECT_EQ(read_line(c.get(), 1, &line), LineStatus::kClosed);
  EXPECT_FALSE(accept_unix(listener->get(), 10)) << "no one else is waiting";
  fs::remove(path);
  EXPECT_FALSE(connect_unix(path).ok());
  EXPECT_FALSE(listen_unix(fs::path(std::string(200, 'x'))).ok()) << "too long for a socket address";
}

TEST(UnixSocket, ASessionWhoseClientHangsUpIsInterruptedAndItsChildKilled) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  auto s = Session::start({{"sleep", "30"}}, fs::temp_directory_path() / "kopt_session_hangup.log");
  ASSERT_TRUE(s.ok());
  ::close(sv[1]);  // the client goes away
  auto r = (*s)->receive(20, sv[0]);
  EXPECT_EQ(r.kind, Session::ReplyKind::kInterrupted) << r.how;
  EXPECT_FALSE((*s)->alive());
  ::close(sv[0]);
}

}  // namespace
}  // namespace kopt::util
