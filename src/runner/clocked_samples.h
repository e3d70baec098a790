#pragma once
// The samples of one timed series (runner/timer.h TimedSeries) or of one library of a paired run
// (runner/paired.h PairedEntry), on the series' one clock (runner/gpu_clock.h SeriesClock): what each sample
// counts, its event figure, and on the kernel clock its busy time and record count.
#include <vector>

namespace kopt::runner {

struct ClockedSamples {
  std::vector<double> gpu_ms;    // what each sample counts: the kernel clock's span, or its event figure
  std::vector<double> event_ms;  // the event figure of each sample (equal to gpu_ms on events)
  std::vector<double> busy_ms;   // cupti_activity only: solve()'s busy time of each sample
  std::vector<double> kernels;   // cupti_activity only: solve()'s records of each sample

  // One sample: on the kernel clock its span, busy time and records; on events its event figure.
  void add(bool kernel_clock, double span_ms, double event, double busy, double records);
  // The series switched to events: every sample so far counts its event figure.
  void to_events();
  void clear();
};

}  // namespace kopt::runner
