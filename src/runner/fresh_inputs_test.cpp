#include "runner/fresh_inputs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "runner/threads.h"

namespace kopt::runner {

TEST(FreshInputs, FloatingPointInputsRotateAndIndicesKeepTheirOrder) {
  EXPECT_TRUE(rotates(contract::DType::kF32));
  EXPECT_TRUE(rotates(contract::DType::kF16));
  EXPECT_TRUE(rotates(contract::DType::kBF16));
  EXPECT_TRUE(rotates(contract::DType::kF64));
  EXPECT_FALSE(rotates(contract::DType::kI32));
  EXPECT_FALSE(rotates(contract::DType::kI64));
  EXPECT_FALSE(rotates(contract::DType::kU8));
  EXPECT_FALSE(rotates(contract::DType::kBool));
}

TEST(FreshInputs, EveryShiftMovesEveryElementAndShiftsDiffer) {
  std::mt19937_64 rng(7);
  EXPECT_EQ(shift_elements(rng, 0), 0u);
  EXPECT_EQ(shift_elements(rng, 1), 0u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(shift_elements(rng, 2), 1u) << "the only shift that moves both";
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    uint64_t k = shift_elements(rng, 1 << 20);
    ASSERT_GE(k, 1u);
    ASSERT_LT(k, 1u << 20);
    seen.insert(k);
  }
  EXPECT_GT(seen.size(), 990u) << "a memoising kernel must almost never see the same content twice";
}

TEST(FreshInputs, EverySeriesHasAnAuditInItsFirstWindowAtAnUnpredictablePlace) {
  std::set<int> firsts;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    AuditSchedule s(seed);
    int first = -1, later = 0;
    for (int i = 0; i < 2000; ++i)
      if (s.audit(i)) {
        if (first < 0) first = i;
        else ++later;
      }
    ASSERT_GE(first, 0);
    ASSERT_LT(first, AuditSchedule::kWindow);
    firsts.insert(first);
    EXPECT_EQ(s.audits(), later + 1);
    // About one in 32 afterwards: 62 expected in 2000 samples; far from 0 and far from all.
    EXPECT_GT(later, 25) << seed;
    EXPECT_LT(later, 110) << seed;
  }
  EXPECT_EQ(firsts.size(), static_cast<size_t>(AuditSchedule::kWindow)) << "every position of the window is used";
}

TEST(Threads, AThreadStartedAfterASnapshotIsFoundAndOneThatEndsIsNot) {
  auto before = live_threads();
  ASSERT_FALSE(before.empty()) << "/proc/self/task is readable here";
  std::atomic<bool> stop{false};
  std::thread lingering([&] {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  std::thread brief([] {});
  brief.join();
  auto fresh = started_since(before, live_threads());
  ASSERT_EQ(fresh.size(), 1u) << "the joined thread is gone; the lingering one is new";
  auto alive = still_running(fresh, 5);
  EXPECT_EQ(alive, fresh);
  EXPECT_NE(describe_threads(alive).find("1 thread(s): "), std::string::npos);
  stop = true;
  lingering.join();
  EXPECT_TRUE(still_running(fresh, 50).empty()) << "ended within the settle time: not counted";
  EXPECT_TRUE(started_since(before, before).empty());
}

}  // namespace kopt::runner
