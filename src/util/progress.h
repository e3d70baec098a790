#pragma once
// Progress of a long phase (golden data, compiling, measuring, profiling) on stderr. On a terminal: one bar
// redrawn in place, with counts, elapsed time and ETA; otherwise plain lines (a start line, at most one line
// every few seconds, an end line); with --quiet nothing. Formatting is pure (render_progress); the Progress
// object owns the clock, the terminal and, on a terminal, a thread that redraws an uncounted phase's clock.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace kopt::util {

enum class ProgressMode { kBar, kLines, kQuiet };

// The process-wide mode: kQuiet once set_progress_quiet(true) (a command's --quiet); else KOPT_PROGRESS
// (bar | lines | off) when set; else a bar when stderr is a terminal, lines otherwise.
ProgressMode progress_mode();
void set_progress_quiet(bool quiet);
// The choice progress_mode() makes, as a pure function of its inputs (env: KOPT_PROGRESS's value or "").
ProgressMode choose_progress_mode(bool quiet, const std::string& env, bool stderr_is_tty);

struct ProgressView {
  std::string label;          // "compiling", "golden data (ref.py, 3 seeds)"
  size_t done = 0, total = 0; // total 0: uncounted (only the clock moves)
  double elapsed_s = 0;
  std::string detail;         // "2 failed", appended after the counts
  bool finished = false;
};

// "0:07", "1:05", "1:02:03".
std::string format_clock(double seconds);
// Remaining seconds from the rate so far; nullopt before the first item is done or when uncounted.
std::optional<double> eta_s(const ProgressView& v);
// One rendered line, without a line break. kBar: "compiling [#####-----] 3/8 0:12 ETA 0:20 (2 failed)"
// within `width` columns; kLines: "compiling: 3/8, 0:12 elapsed, ETA 0:20 (2 failed)". A finished view:
// "compiling: 8/8 in 0:31 (2 failed)". Pure.
std::string render_progress(const ProgressView& v, ProgressMode mode, int width = 80);

// Prints a line on stderr, above the bar being drawn when there is one (so the two never mix).
void progress_print(const std::string& line);

class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  // total 0: an uncounted phase. `out` defaults to stderr; `mode` to progress_mode().
  Progress(std::string label, size_t total = 0, std::optional<ProgressMode> mode = std::nullopt, std::FILE* out = stderr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void set(size_t done, std::string detail = "");
  void advance(size_t n = 1);
  void set_total(size_t total);
  // Prints a line above the bar (the bar is redrawn below it); a plain line in the other modes.
  void note(const std::string& line);
  void finish();  // the end line; later calls do nothing (the destructor calls it)

 private:
  void draw_locked(bool force);
  ProgressView view_locked() const;

  Progress* previous_ = nullptr;  // the bar drawn before this one (nested phases), active again after finish()
  ProgressMode mode_;
  std::FILE* out_;
  Clock::time_point start_, last_draw_{};
  std::mutex mu_;
  std::condition_variable cv_;
  ProgressView v_;
  bool done_ = false;
  std::thread ticker_;
};

}  // namespace kopt::util
