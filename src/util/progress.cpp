#include "util/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>

namespace kopt::util {

namespace {
std::atomic<bool> g_quiet{false};
std::mutex g_active_mu;
Progress* g_active = nullptr;  // the bar being drawn on stderr, if any
constexpr double kLinesInterval_s = 5.0;   // plain lines: at most one every 5 s
constexpr double kBarInterval_s = 0.1;     // a bar: redrawn at most 10 times a second
}  // namespace

ProgressMode choose_progress_mode(bool quiet, const std::string& env, bool stderr_is_tty) {
  if (quiet || env == "off" || env == "quiet") return ProgressMode::kQuiet;
  if (env == "bar") return ProgressMode::kBar;
  if (env == "lines") return ProgressMode::kLines;
  return stderr_is_tty ? ProgressMode::kBar : ProgressMode::kLines;
}

ProgressMode progress_mode() {
  const char* env = std::getenv("KOPT_PROGRESS");
  return choose_progress_mode(g_quiet.load(), env ? env : "", ::isatty(STDERR_FILENO) == 1);
}

void set_progress_quiet(bool quiet) { g_quiet = quiet; }

std::string format_clock(double seconds) {
  long s = std::lround(std::max(0.0, seconds));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::optional<double> eta_s(const ProgressView& v) {
  if (v.total == 0 || v.done == 0 || v.done >= v.total || v.elapsed_s <= 0) return std::nullopt;
  return v.elapsed_s / static_cast<double>(v.done) * static_cast<double>(v.total - v.done);
}

std::string render_progress(const ProgressView& v, ProgressMode mode, int width) {
  const std::string detail = v.detail.empty() ? "" : " (" + v.detail + ")";
  const std::string counts = v.total ? fmt::format("{}/{}", std::min(v.done, v.total), v.total) : "";
  if (v.finished)
    return fmt::format("{}: {}{}{}", v.label, counts, counts.empty() ? "done in " + format_clock(v.elapsed_s)
                                                                       : " in " + format_clock(v.elapsed_s), detail);
  auto eta = eta_s(v);
  const std::string eta_text = v.total ? " ETA " + (eta ? format_clock(*eta) : std::string("-:--")) : "";
  if (mode != ProgressMode::kBar) {
    if (!v.total) return fmt::format("{}: {} elapsed{}", v.label, format_clock(v.elapsed_s), detail);
    return fmt::format("{}: {}, {} elapsed,{}{}", v.label, counts, format_clock(v.elapsed_s), eta_text, detail);
  }
  if (!v.total) return fmt::format("{} ... {}{}", v.label, format_clock(v.elapsed_s), detail);
  std::string tail = fmt::format(" {} {}{}{}", counts, format_clock(v.elapsed_s), eta_text, detail);
  int bar_w = std::clamp(width - static_cast<int>(v.label.size() + tail.size()) - 3, 10, 40);
  int filled = static_cast<int>(static_cast<double>(bar_w) * static_cast<double>(std::min(v.done, v.total)) /
                                static_cast<double>(v.total));
  return fmt::format("{} [{}{}]{}", v.label, std::string(static_cast<size_t>(filled), '#'),
                     std::string(static_cast<size_t>(bar_w - filled), '-'), tail);
}

void progress_print(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_active_mu);
  if (g_active) {
    g_active->note(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  }
}

Progress::Progress(std::string label, size_t total, std::optional<ProgressMode> mode, std::FILE* out)
    : mode_(mode ? *mode : progress_mode()), out_(out), start_(Clock::now()) {
  v_.label = std::move(label);
  v_.total = total;
  if (mode_ == ProgressMode::kQuiet) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (mode_ == ProgressMode::kLines) {
    std::fprintf(out_, "%s\n", (total ? fmt::format("{}: 0/{}", v_.label, total) : v_.label + "...").c_str());
    std::fflush(out_);
    last_draw_ = Clock::now();
    return;
  }
  draw_locked(true);
  if (mode_ == ProgressMode::kBar) {
    if (out_ == stderr) {
      std::lock_guard<std::mutex> active(g_active_mu);
      previous_ = g_active;
      g_active = this;
    }  // the clock moves even while no item finishes
    ticker_ = std::thread([this] {
      std::unique_lock<std::mutex> l(mu_);
      while (!done_) {
        cv_.wait_for(l, std::chrono::milliseconds(500));
        if (!done_) draw_locked(true);
      }
    });
  }
}

Progress::~Progress() { finish(); }

ProgressView Progress::view_locked() const {
  ProgressView v = v_;
  v.elapsed_s = std::chrono::duration<double>(Clock::now() - start_).count();
  return v;
}

void Progress::draw_locked(bool force) {
  if (mode_ == ProgressMode::kQuiet) return;
  auto now = Clock::now();
  double since = std::chrono::duration<double>(now - last_draw_).count();
  double interval = mode_ == ProgressMode::kBar ? kBarInterval_s : kLinesInterval_s;
  if (!force && since < interval) return;
  last_draw_ = now;
  std::string line = render_progress(view_locked(), mode_);
  if (mode_ == ProgressMode::kBar) std::fprintf(out_, "\r%s\x1b[K", line.c_str());
  else std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void Progress::set(size_t done, std::string detail) {
  std::lock_guard<std::mutex> lock(mu_);
  if (done_) return;
  v_.done = done;
  v_.detail = std::move(detail);
  draw_locked(v_.total && v_.done >= v_.total && mode_ == ProgressMode::kBar);
}

void Progress::advance(size_t n) {
  std::string detail;
  size_t done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done = v_.done + n;
    detail = v_.detail;
  }
  set(done, detail);
}

void Progress::set_total(size_t total) {
  std::lock_guard<std::mutex> lock(mu_);
  v_.total = total;
}

void Progress::note(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (mode_ == ProgressMode::kBar && !done_) {
    std::fprintf(out_, "\r\x1b[K%s\n", line.c_str());
    draw_locked(true);
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
  }
}

void Progress::finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  if (mode_ == ProgressMode::kQuiet) return;
  if (mode_ == ProgressMode::kBar && out_ == stderr) {
    std::lock_guard<std::mutex> active(g_active_mu);
    if (g_active == this) g_active = previous_;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ProgressView v = view_locked();
  v.finished = true;
  std::string line = render_progress(v, mode_);
  if (mode_ == ProgressMode::kBar) std::fprintf(out_, "\r%s\x1b[K\n", line.c_str());
  else std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

}  // namespace kopt::util
