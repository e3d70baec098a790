#pragma once
// The speed-of-light floor (docs/GATES.md "Evidence that cannot be gamed", issue 40): the least time ANY correct
// kernel needs for the workload model's work on this GPU, so that a measured time below it is impossible rather
// than fast. It is deliberately more generous than the roofline's floor (roofline/model.h), which judges how good
// a kernel is; this one only decides what cannot be true:
//   compute: each dtype's FLOPs at the fastest roof that dtype could legitimately run on (float32 on the TF32
//            tensor cores as well as the FMA units, float64 on the DMMA tensor cores, float16/bfloat16 on either
//            16-bit tensor roof), the largest of the per-dtype times (the units run concurrently);
//   memory:  the bytes that must come from DRAM with a cold L2 (all reads, and the writes beyond what the L2 can
//            hold at the end) at the fastest DRAM rate measured for any mix; with a warm L2 (--l2 warm) every byte
//            at the L2's read rate instead.
// A measured median below (1 - kSpeedOfLightMargin) x the floor is `below_speed_of_light`: a candidate is rejected
// naming its figure and the roof; for a baseline it is an input error (the workload model or the kernel is wrong).
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "roofline/ceilings.h"
#include "roofline/model.h"
#include "util/json_io.h"

namespace kopt::roofline {

// Ceilings are kopt's own measurements and can sit a few per cent under the true peaks: 10% more than that is
// still impossible.
inline constexpr double kSpeedOfLightMargin = 0.10;

struct SpeedOfLight {
  double floor_ms = 0;  // max(compute_ms, memory_ms)
  double compute_ms = 0, memory_ms = 0;
  double flops = 0, bytes = 0;  // the work the floor charges: all FLOPs, and the DRAM (or L2) bytes counted
  std::string compute_roof;     // "tf32_tensor 494.0 TFLOP/s (measured)", "" without FLOPs
  std::string memory_roof;      // "dram_read 4610 GB/s (measured)"
  bool binding_compute() const { return compute_ms > memory_ms; }
};

// Error (exit 4) when no roof is known for a dtype the model names, or no DRAM (L2) rate is known.
Result<SpeedOfLight> speed_of_light(const Ceilings& c, const WorkloadModel& m, const std::vector<std::string>& buffer_dtypes,
                                    long long l2_bytes, bool warm_l2);

// The sentence of a violation, or nullopt when `median_ms` is possible: "0.0620 ms is below the speed-of-light floor
// 2.078 ms (FLOPs at fp32_fma ...): 33.5x faster than possible".
std::optional<std::string> below_speed_of_light(const SpeedOfLight& s, double median_ms,
                                                double margin = kSpeedOfLightMargin);

util::Json to_json(const SpeedOfLight& s);

}  // namespace kopt::roofline
