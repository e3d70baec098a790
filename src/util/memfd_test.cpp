#include "util/memfd.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "util/process.h"

namespace kopt::util {
namespace {

Fd memfd_with(const std::string& text) {
  auto fd = make_memfd("kopt-test");
  EXPECT_TRUE(fd.ok());
  EXPECT_EQ(::write(fd->get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  return std::move(fd).value();
}

TEST(MemoryFile, SealedForGoodItsSizeAndBytesAreFixedAndItIsReadWithoutMovingTheOffset) {
  Fd fd = memfd_with("expected outputs");
  ASSERT_TRUE(seals_of(fd.get()).ok());
  EXPECT_EQ(*seals_of(fd.get()) & kFrozenSeals, 0);
  ASSERT_EQ(::fcntl(fd.get(), F_ADD_SEALS, kFrozenSeals), 0);
  EXPECT_EQ(*seals_of(fd.get()) & kFrozenSeals, kFrozenSeals);
  EXPECT_LT(::pwrite(fd.get(), "X", 1, 0), 0) << "no write";
  EXPECT_NE(::ftruncate(fd.get(), 1), 0) << "no shrink";
  EXPECT_NE(::ftruncate(fd.get(), 1 << 20), 0) << "no growth";
  EXPECT_EQ(*read_all_at(fd.get()), "expected outputs");
  EXPECT_EQ(*read_all_at(fd.get()), "expected outputs") << "pread: every reader sees it from the start";
  EXPECT_FALSE(read_all_at(fd.get(), 4).ok()) << "more than it may read";
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  EXPECT_FALSE(seals_of(p[0]).ok()) << "a pipe is no memfd";
  ::close(p[0]);
  ::close(p[1]);
}

// ProcessSpec::pass_fds: the child named inherits the descriptor under its number; any other child of this process
// does not (the parent's copy stays close-on-exec).
TEST(MemoryFile, OnlyTheChildItIsPassedToInheritsIt) {
  Fd passed = memfd_with("only for you"), other = memfd_with("for nobody");
  const std::string p = std::to_string(passed.get()), o = std::to_string(other.get());
  ProcessSpec spec{{"sh", "-c", "head -c 12 /proc/self/fd/" + p + "; test -e /proc/self/fd/" + o + " && echo LEAKED; true"}};
  spec.pass_fds = {passed.get()};
  auto r = run_process(spec);
  ASSERT_TRUE(r.started) << r.start_error;
  EXPECT_EQ(r.stdout_text, "only for you") << r.stderr_text;
  auto without = run_process({{"sh", "-c", "test -e /proc/self/fd/" + p + " && echo LEAKED; true"}});
  EXPECT_EQ(without.stdout_text, "") << "a child it was not passed to";
  EXPECT_EQ(::fcntl(passed.get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC) << "still close-on-exec here";
}

TEST(MemoryFile, ADescriptorComesOnASocketWithItsByte) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  Fd ours(sv[0]), theirs(sv[1]);
  EXPECT_FALSE(receive_fd(ours.get(), 10).ok()) << "nothing sent yet";
  Fd fd = memfd_with("sent");
  const char byte = 'E';
  ASSERT_TRUE(send_with_fd(theirs.get(), &byte, 1, fd.get()));
  fd.reset();
  auto got = receive_fd(ours.get(), 1000);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*read_all_at(got->get()), "sent");
  EXPECT_EQ(::fcntl(got->get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  theirs.reset();
  EXPECT_FALSE(receive_fd(ours.get(), 1000).ok()) << "the peer closed";
}

TEST(MemoryFile, DumpableIsSetAndRestored) {
  const bool was = set_dumpable(false);
  EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
  EXPECT_FALSE(set_dumpable(was));
  EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), was ? 1 : 0);
}

}  // namespace
}  // namespace kopt::util
