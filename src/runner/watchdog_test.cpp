#include "runner/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace kopt::runner {

TEST(Watchdog, ReleasesOnceTheBoundPassesAndSaysSo) {
  std::atomic<uint32_t> released{0};
  std::atomic<int> calls{0};
  Watchdog w([&](uint32_t token) {
    released = token;
    ++calls;
  });
  w.arm(7, 20);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(released.load(), 7u);
  EXPECT_EQ(calls.load(), 1);  // once, not again while it stays armed
  EXPECT_TRUE(w.disarm());
}

TEST(Watchdog, ADisarmBeforeTheBoundNeverReleases) {
  std::atomic<int> calls{0};
  Watchdog w([&](uint32_t) { ++calls; });
  for (uint32_t t = 1; t <= 50; ++t) {
    w.arm(t, 1000);
    EXPECT_FALSE(w.disarm());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(calls.load(), 0);
  // Re-armed after a release: the next sample gets its own bound and its own answer.
  w.arm(51, 5);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(w.disarm());
  w.arm(52, 1000);
  EXPECT_FALSE(w.disarm());
  EXPECT_EQ(calls.load(), 1);
}

TEST(Watchdog, DestroyedWhileArmedWithoutReleasing) {
  std::atomic<int> calls{0};
  {
    Watchdog w([&](uint32_t) { ++calls; });
    w.arm(1, 10000);
  }
  EXPECT_EQ(calls.load(), 0);
}

}  // namespace kopt::runner
