#pragma once
// The optimize loop's two clocks (state.json): the search's (stop.search_s; the time budget counts from the end of
// the gates, across --resume) and the whole run's wall (wall.whole_s: from the Optimizer's construction, plus a
// resumed run's earlier whole_s). Internal to the loop, as optimizer.h is.
#include <chrono>
#include <optional>

namespace kopt::loop {

struct RunClock {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> search_start;  // set by start_search()
  double search_base_s = 0;                       // the search's seconds before it (a resumed run's)
  const Clock::time_point run_start = Clock::now();
  double wall_base_s = 0;  // a resumed run's earlier whole_s

  void start_search(double search_s_before) {
    search_base_s = search_s_before;
    search_start = Clock::now();
  }
  // The search's seconds so far; nullopt before start_search().
  std::optional<double> search_s() const {
    if (!search_start) return std::nullopt;
    return search_base_s + std::chrono::duration<double>(Clock::now() - *search_start).count();
  }
  double elapsed_s() const { return wall_base_s + std::chrono::duration<double>(Clock::now() - run_start).count(); }
};

}  // namespace kopt::loop
