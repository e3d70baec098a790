#pragma once
// A host thread that releases the blocker (runner/timer.h) when solve() has not returned within a bound: a
// solve() that synchronises inside waits for work queued behind the blocker, which waits for the host, so
// without a second thread the child would hang until the blocker's own timeout. Armed around every blocked
// sample; disarm() says whether it fired. No CUDA here: `release` is the action (write the token to the flag).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace kopt::runner {

class Watchdog {
 public:
  explicit Watchdog(std::function<void(uint32_t token)> release);
  ~Watchdog();  // stops and joins the thread
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // From now, release(token) is called once `bound_ms` have passed, unless disarm() comes first.
  void arm(uint32_t token, double bound_ms);
  // Stops the clock; true when release(token) was called since arm (the sample must be discarded).
  bool disarm();

 private:
  void loop();

  std::function<void(uint32_t)> release_;
  std::mutex m_;
  std::condition_variable cv_;
  bool armed_ = false, fired_ = false, stop_ = false;
  uint32_t token_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace kopt::runner
