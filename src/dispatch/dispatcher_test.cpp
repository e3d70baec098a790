#include "dispatch/dispatcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace kopt::dispatch {
namespace {

// A source of jobs 0..n-1, as the measure loop's queue of built candidates is.
Dispatcher::Next count_to(size_t n) {
  auto i = std::make_shared<size_t>(0);
  return [i, n]() -> std::optional<size_t> {
    if (*i >= n) return std::nullopt;
    return (*i)++;
  };
}

TEST(Dispatcher, OneSlotRunsEveryJobInOrderOnTheCallersThread) {
  Dispatcher d({1, 2});
  std::vector<size_t> order;
  const auto caller = std::this_thread::get_id();
  bool same_thread = true;
  d.run(count_to(5), [&](size_t j, int slot, int) {
    order.push_back(j);
    same_thread = same_thread && std::this_thread::get_id() == caller && slot == 0;
    return Attempt::kDone;
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(same_thread);
  ASSERT_EQ(d.jobs().size(), 5u);
  for (size_t k = 0; k < 5; ++k) EXPECT_EQ(d.jobs()[k].first, k);
  EXPECT_EQ(d.slots()[0].jobs, 5);
}

TEST(Dispatcher, FourFakeGpusShareTheJobsAndRunThemAtOnce) {
  Dispatcher d({4, 2});
  std::atomic<int> running{0}, most{0};
  std::mutex mu;
  std::map<size_t, int> ran_on;
  d.run(count_to(16), [&](size_t j, int slot, int) {
    int now = ++running;
    int m = most.load();
    while (now > m && !most.compare_exchange_weak(m, now)) {}
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --running;
    std::lock_guard<std::mutex> lock(mu);
    ran_on[j] = slot;
    return Attempt::kDone;
  });
  EXPECT_EQ(ran_on.size(), 16u);
  EXPECT_GE(most.load(), 2);  // in parallel, not one after another
  EXPECT_LE(most.load(), 4);
  int total = 0;
  for (const auto& s : d.slots()) {
    total += s.jobs;
    EXPECT_GT(s.jobs, 0);
  }
  EXPECT_EQ(total, 16);
  // Records are in the order the source yielded the jobs, each with the one slot it ran on.
  for (size_t k = 0; k < 16; ++k) {
    EXPECT_EQ(d.jobs()[k].first, k);
    ASSERT_EQ(d.jobs()[k].second.slots.size(), 1u);
    EXPECT_EQ(d.jobs()[k].second.slots[0], ran_on[k]);
  }
  EXPECT_NE(utilisation_text(d, {"GPU 0", "GPU 1", "GPU 2", "GPU 3"}).find("GPU 3: "), std::string::npos);
}

TEST(Dispatcher, APinnedJobRunsOnlyOnItsSlot) {
  Dispatcher d({3, 2});
  std::mutex mu;
  std::map<size_t, int> ran_on;
  d.run(count_to(12), [&](size_t j, int slot, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard<std::mutex> lock(mu);
    ran_on[j] = slot;
    return Attempt::kDone;
  }, [](size_t j) -> std::optional<int> { return j % 3 == 0 ? std::optional<int>(2) : std::nullopt; });
  ASSERT_EQ(ran_on.size(), 12u);
  for (size_t j = 0; j < 12; j += 3) EXPECT_EQ(ran_on[j], 2) << "job " << j;
}

TEST(Dispatcher, AJobWhoseWorkerDiesIsRetriedOnceOnAnotherSlotThenReported) {
  Dispatcher d({3, 2});
  std::mutex mu;
  std::map<size_t, std::vector<int>> attempts;
  d.run(count_to(9), [&](size_t j, int slot, int attempt) {
    {
      std::lock_guard<std::mutex> lock(mu);
      attempts[j].push_back(slot);
      EXPECT_EQ(static_cast<int>(attempts[j].size()) - 1, attempt);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (j == 4) return Attempt::kWorkerLost;                  // dies wherever it runs (a kernel that faults)
    if (j == 7 && attempt == 0) return Attempt::kWorkerLost;  // its node was lost: fine elsewhere
    return Attempt::kDone;
  });
  ASSERT_EQ(attempts[4].size(), 2u);
  EXPECT_NE(attempts[4][0], attempts[4][1]);  // the retry ran elsewhere
  ASSERT_EQ(attempts[7].size(), 2u);
  EXPECT_NE(attempts[7][0], attempts[7][1]);
  const auto& r4 = d.jobs()[4].second;
  const auto& r7 = d.jobs()[7].second;
  EXPECT_TRUE(r4.lost);
  EXPECT_FALSE(r7.lost);
  EXPECT_EQ(r7.slots, attempts[7]);
  for (size_t j : {0, 1, 2, 3, 5, 6, 8}) EXPECT_EQ(attempts[j].size(), 1u) << "job " << j;  // only the lost retried
  int lost = 0;
  for (const auto& s : d.slots()) lost += s.lost;
  EXPECT_EQ(lost, 3);
}

TEST(Dispatcher, OnOneSlotALostJobIsReportedWithoutARetry) {
  Dispatcher d({1, 2});
  int calls = 0;
  d.run(count_to(2), [&](size_t j, int, int) {
    ++calls;
    return j == 0 ? Attempt::kWorkerLost : Attempt::kDone;
  });
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(d.jobs()[0].second.lost);
  EXPECT_FALSE(d.jobs()[1].second.lost);
}

TEST(Dispatcher, AStopEndsTheRunAfterTheJobsInFlightAndStartsNoMore) {
  Dispatcher d({2, 2});
  std::atomic<int> started{0};
  d.run(count_to(50), [&](size_t j, int, int) {
    ++started;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return j == 3 ? Attempt::kStop : Attempt::kDone;
  });
  EXPECT_LT(started.load(), 10);
  EXPECT_TRUE(d.jobs()[3].second.stopped);
  int ran = 0;
  for (const auto& [j, r] : d.jobs()) ran += r.ran() ? 1 : 0;
  EXPECT_EQ(ran, started.load());
}

TEST(Dispatcher, ResumeSkipsWhatTheSourceNoLongerYields) {
  // A resumed run's source leaves out the candidates state.json already holds: only the rest run.
  std::set<size_t> done_before = {0, 1, 2, 5};
  auto i = std::make_shared<size_t>(0);
  Dispatcher::Next next = [&, i]() -> std::optional<size_t> {
    while (*i < 8 && done_before.count(*i)) ++*i;
    if (*i >= 8) return std::nullopt;
    return (*i)++;
  };
  Dispatcher d({2, 2});
  std::mutex mu;
  std::set<size_t> ran;
  d.run(next, [&](size_t j, int, int) {
    std::lock_guard<std::mutex> lock(mu);
    ran.insert(j);
    return Attempt::kDone;
  });
  EXPECT_EQ(ran, (std::set<size_t>{3, 4, 6, 7}));
}

}  // namespace
}  // namespace kopt::dispatch
