#include "runner/shared_buffer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

namespace kopt::runner {

namespace {

// KOPT_JUDGE_SHM for one test.
struct ShmEnv {
  explicit ShmEnv(const char* v) { ::setenv("KOPT_JUDGE_SHM", v, 1); }
  ~ShmEnv() { ::unsetenv("KOPT_JUDGE_SHM"); }
};

}  // namespace

TEST(SharedBuffer, TheReaderSeesWhatTheWriterWroteThroughItsOwnMapping) {
  SharedBuffer w;
  ASSERT_EQ(w.kind(), SharedBuffer::Kind::kMemfd) << w.private_reason();
  ASSERT_TRUE(w.reserve(1000).ok());
  EXPECT_GE(w.size(), 1000u);
  for (size_t i = 0; i < 1000; ++i) w.data()[i] = static_cast<unsigned char>(i * 7);
  auto v = SharedView::map(::dup(w.fd()));
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->size(), w.size());
  auto r = v->range(10, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::memcmp(r->data(), w.data() + 10, 100), 0);
  w.data()[50] ^= 0xFF;  // one buffer, two mappings: a later write is seen
  EXPECT_EQ((*r)[40], w.data()[50]);
  EXPECT_FALSE(v->range(w.size() - 10, 11).ok()) << "beyond its end";
  EXPECT_FALSE(v->range(~uint64_t{0}, 2).ok()) << "an offset that wraps";
  EXPECT_TRUE(w.holds(w.data() + 5, 10));
  EXPECT_FALSE(w.holds(w.data() + w.size() - 1, 2));
  EXPECT_EQ(w.offset_of(w.data() + 123), 123u);
}

TEST(SharedBuffer, ItsSizeCannotChangeSoAReaderNeverFaults) {
  SharedBuffer w;
  ASSERT_EQ(w.kind(), SharedBuffer::Kind::kMemfd);
  ASSERT_TRUE(w.reserve(4096).ok());
  // A candidate runs in the writer's process and holds its descriptor: it cannot shrink the buffer under the judge
  // (a read beyond the end of a shrunken memfd is SIGBUS), nor grow it, nor change the seals.
  EXPECT_NE(::ftruncate(w.fd(), 0), 0);
  EXPECT_NE(::ftruncate(w.fd(), static_cast<off_t>(w.size() * 2)), 0);
  EXPECT_NE(::fcntl(w.fd(), F_ADD_SEALS, F_SEAL_WRITE), 0);
  const int seals = ::fcntl(w.fd(), F_GET_SEALS);
  EXPECT_TRUE(seals & F_SEAL_SHRINK);
  EXPECT_TRUE(seals & F_SEAL_SEAL);
}

TEST(SharedBuffer, TheReaderRefusesAnythingButAMemfdThatCannotShrink) {
  char path[] = "/tmp/kopt_shared_XXXXXX";
  const int file = ::mkstemp(path);
  ASSERT_GE(file, 0);
  ::unlink(path);
  ASSERT_EQ(::ftruncate(file, 4096), 0);
  auto f = SharedView::map(file);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message.find("not a memfd"), std::string::npos) << f.error().message;

  const int unsealed = ::memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_EQ(::ftruncate(unsealed, 4096), 0);
  auto u = SharedView::map(unsealed);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.error().message.find("shrink"), std::string::npos) << u.error().message;

  const int empty = ::memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_EQ(::fcntl(empty, F_ADD_SEALS, F_SEAL_SHRINK), 0);
  EXPECT_FALSE(SharedView::map(empty).ok());
}

TEST(SharedBuffer, GrowingReplacesTheBufferAndRePinsIt) {
  std::vector<std::pair<void*, size_t>> pinned;
  std::vector<void*> unpinned;
  {
    SharedBuffer w;
    ASSERT_TRUE(w.reserve(100).ok());
    const uint64_t g1 = w.generation();
    EXPECT_NE(g1, 0u);
    w.set_pinning({[&](void* p, size_t n) {
                     pinned.emplace_back(p, n);
                     return true;
                   },
                   [&](void* p) { unpinned.push_back(p); }});
    EXPECT_TRUE(w.pinned());
    ASSERT_EQ(pinned.size(), 1u) << "the present buffer is pinned at once";
    ASSERT_TRUE(w.reserve(w.size()).ok());
    EXPECT_EQ(w.generation(), g1) << "no growth, no new buffer";
    void* first = w.data();
    ASSERT_TRUE(w.reserve(w.size() + 1).ok());
    EXPECT_NE(w.generation(), g1);
    ASSERT_EQ(unpinned.size(), 1u);
    EXPECT_EQ(unpinned[0], first) << "unpinned before it is unmapped";
    ASSERT_EQ(pinned.size(), 2u);
    EXPECT_EQ(pinned[1].first, w.data());
    EXPECT_EQ(pinned[1].second, w.size());
  }
  EXPECT_EQ(unpinned.size(), 2u) << "and at the end";
}

TEST(SharedBuffer, PrivateWhereAskedOrTurnedOff) {
  SharedBuffer asked(false);
  EXPECT_EQ(asked.kind(), SharedBuffer::Kind::kPrivate);
  ShmEnv off("off");
  SharedBuffer w;
  EXPECT_EQ(w.kind(), SharedBuffer::Kind::kPrivate);
  EXPECT_NE(w.private_reason().find("KOPT_JUDGE_SHM=off"), std::string::npos);
  ASSERT_TRUE(w.reserve(10).ok());
  EXPECT_EQ(w.fd(), -1);
  w.data()[9] = 1;  // writable, this process's own
}

TEST(SharedBuffer, ParallelCopyZeroAndEqualCoverEveryByte) {
  std::vector<size_t> sizes = {0, 1, 4097, (size_t{8} << 20) - 3, (size_t{40} << 20) + 5};
  // t parts of 8 MiB and t - 1 bytes: n / t is a whole number of cache lines, n % t bytes beyond them (the tail a
  // rounded-down share lost: CUB's scan at 2^25 + 1 int32s, 8 threads, judged a last element never copied).
  for (size_t t = 2; t <= 8; ++t) sizes.push_back(t * (size_t{8} << 20) + t - 1);
  for (size_t n : sizes) {
    std::vector<unsigned char> src(n), dst(n, 0xAB);
    std::iota(src.begin(), src.end(), static_cast<unsigned char>(n));
    parallel_copy(dst.data(), src.data(), n);
    EXPECT_EQ(src, dst) << n;
    EXPECT_TRUE(parallel_equal(dst.data(), src.data(), n));
    if (n > 0) {
      dst[n - 1] ^= 1;  // in the last thread's part
      EXPECT_FALSE(parallel_equal(dst.data(), src.data(), n)) << n;
    }
    parallel_zero(dst.data(), n);
    EXPECT_EQ(std::count(dst.begin(), dst.end(), 0), static_cast<std::ptrdiff_t>(n)) << n;
  }
}

}  // namespace kopt::runner
