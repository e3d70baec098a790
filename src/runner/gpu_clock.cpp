#include "runner/gpu_clock.h"

#include <algorithm>
#include <array>

namespace kopt::runner {

namespace {

struct ReasonRow {
  ClockOffReason r;
  std::string_view name, text;
};
constexpr std::array<ReasonRow, 5> kReasons = {{
    {ClockOffReason::kNone, "", "timed by CUPTI's activity records (the kernel clock)"},
    {ClockOffReason::kDisabled, "disabled", "the kernel clock is disabled (KOPT_CUPTI=0)"},
    {ClockOffReason::kUnavailable, "cupti_unavailable", "CUPTI could not be loaded or enabled"},
    {ClockOffReason::kNoSpanInFirstSamples, "no_span_in_first_samples",
     "one of the first samples had no usable CUPTI records"},
    {ClockOffReason::kTooManyMissingSpans, "missing_spans", "too many samples had no usable CUPTI records"},
}};
static_assert(kReasons.size() == static_cast<size_t>(ClockOffReason::kTooManyMissingSpans) + 1, "one row per reason");

}  // namespace

std::optional<ActivitySpan> solve_span(std::vector<GpuActivity> records, bool blocked, bool cold_l2, int flush_kernels) {
  for (const auto& r : records)
    if (r.end_ns < r.start_ns || (r.start_ns == 0 && r.end_ns == 0)) return std::nullopt;
  std::stable_sort(records.begin(), records.end(),
                   [](const GpuActivity& a, const GpuActivity& b) { return a.start_ns < b.start_ns; });
  size_t first = 0;
  auto drop = [&](ActivityKind expected) {
    if (first >= records.size() || records[first].kind != expected) return false;
    ++first;
    return true;
  };
  if (blocked && !drop(ActivityKind::kKernel)) return std::nullopt;
  if (cold_l2 && !drop(ActivityKind::kMemset)) return std::nullopt;
  for (int i = 0; cold_l2 && i < flush_kernels; ++i)
    if (!drop(ActivityKind::kKernel)) return std::nullopt;
  if (first >= records.size()) return std::nullopt;
  uint64_t lo = records[first].start_ns, hi = records[first].end_ns, busy_ns = 0;
  for (size_t i = first; i < records.size(); ++i) {
    lo = std::min(lo, records[i].start_ns);
    hi = std::max(hi, records[i].end_ns);
    busy_ns += records[i].end_ns - records[i].start_ns;
  }
  ActivitySpan s;
  s.span_ms = static_cast<double>(hi - lo) / 1e6;
  s.busy_ms = static_cast<double>(busy_ns) / 1e6;
  s.count = static_cast<int>(records.size() - first);
  return s;
}

std::string_view clock_name(GpuClock c) { return c == GpuClock::kCuptiActivity ? "cupti_activity" : "events"; }

std::string_view off_reason_name(ClockOffReason r) { return kReasons[static_cast<size_t>(r)].name; }
std::string_view describe(ClockOffReason r) { return kReasons[static_cast<size_t>(r)].text; }

SeriesClock::SeriesClock(GpuClock start, ClockOffReason why_off, int max_missing)
    : clock_(start), why_off_(start == GpuClock::kCuptiActivity ? ClockOffReason::kNone : why_off),
      max_missing_(max_missing) {}

SeriesClock::Step SeriesClock::add(bool has_span) {
  if (clock_ == GpuClock::kEvents) return Step::kKeep;
  ++seen_;
  if (has_span) return Step::kKeep;
  ++missing_;
  if (seen_ <= kDecidingSamples || missing_ > max_missing_) {
    clock_ = GpuClock::kEvents;
    why_off_ = seen_ <= kDecidingSamples ? ClockOffReason::kNoSpanInFirstSamples : ClockOffReason::kTooManyMissingSpans;
    return Step::kSwitchToEvents;
  }
  return Step::kDrop;
}

}  // namespace kopt::runner
