#pragma once
// Wall-time accounting by phase: laps(name) adds the seconds since the previous lap (or the start) to
// seconds[name]; total_s() is the wall since the start. bench's and prepare's phase_seconds.
#include <chrono>
#include <map>
#include <string>

namespace kopt::util {

class Laps {
 public:
  explicit Laps(std::map<std::string, double>& seconds) : seconds_(seconds) {}
  void operator()(const std::string& name) {
    const auto now = Clock::now();
    seconds_[name] += std::chrono::duration<double>(now - since_).count();
    since_ = now;
  }
  double total_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  std::map<std::string, double>& seconds_;
  const Clock::time_point start_ = Clock::now();
  Clock::time_point since_ = start_;
};

}  // namespace kopt::util
