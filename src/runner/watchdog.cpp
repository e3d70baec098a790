#include "runner/watchdog.h"

namespace kopt::runner {

Watchdog::Watchdog(std::function<void(uint32_t)> release) : release_(std::move(release)), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::arm(uint32_t token, double bound_ms) {
  {
    std::lock_guard<std::mutex> lock(m_);
    armed_ = true;
    fired_ = false;
    token_ = token;
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double, std::milli>(bound_ms));
  }
  cv_.notify_all();
}

bool Watchdog::disarm() {
  std::lock_guard<std::mutex> lock(m_);
  armed_ = false;
  return fired_;
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(m_);
  while (!stop_) {
    if (!armed_) {
      cv_.wait(lock);
      continue;
    }
    if (std::chrono::steady_clock::now() >= deadline_) {
      release_(token_);  // under the lock: disarm() cannot return "not fired" while the release is under way
      fired_ = true;
      armed_ = false;
      continue;
    }
    cv_.wait_until(lock, deadline_);
  }
}

}  // namespace kopt::runner
