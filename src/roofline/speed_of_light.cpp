#include "roofline/speed_of_light.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kopt::roofline {

namespace {

// The roofs a dtype's FLOPs could legitimately run on (the tolerance decides whether a kernel may; the floor must
// not reject one that does).
std::vector<Roof> legitimate_roofs(Roof r) {
  switch (r) {
    case Roof::kFp32Fma: return {Roof::kFp32Fma, Roof::kTf32Tensor};
    case Roof::kFp64Fma: return {Roof::kFp64Fma, Roof::kFp64Tensor};
    case Roof::kFp16Tensor:
    case Roof::kBf16Tensor: return {Roof::kFp16Tensor, Roof::kBf16Tensor};
    default: return {r};
  }
}

std::string roof_text(Roof r, const Ceiling& c) {
  return fmt::format("{} {:.1f} {} ({})", roof_info(r).name, c.value, roof_info(r).unit, describe(c.source));
}

}  // namespace

Result<SpeedOfLight> speed_of_light(const Ceilings& c, const WorkloadModel& m, const std::vector<std::string>& buffer_dtypes,
                                    long long l2_bytes, bool warm_l2) {
  SpeedOfLight s;
  for (const auto& [dtype, flops] : m.flops_by_dtype) {
    if (!(flops > 0)) continue;
    s.flops += flops;
    if (unmodelled_integer_dtype(dtype)) continue;  // no integer ALU ceiling: its operations bound nothing here
    RoofChoice choice;
    if (dtype.empty()) {
      KOPT_TRY_ASSIGN(choice, infer_roof_from_buffers(buffer_dtypes));
    } else {
      KOPT_TRY_ASSIGN(choice, roof_for_dtype(dtype));
    }
    const Ceiling* best = nullptr;
    Roof best_roof = choice.roof;
    for (Roof r : legitimate_roofs(choice.roof))
      if (const Ceiling* x = c.find(r); x && x->value > 0 && (!best || x->value > best->value)) {
        best = x;
        best_roof = r;
      }
    if (!best)
      return input_error("no " + std::string(roof_info(choice.roof).name) + " ceiling for " + c.gpu_name +
                         ": measure it (kopt roofline --ceilings-only --remeasure)");
    const double ms = flops / (best->value * 1e12) * 1e3;
    if (ms > s.compute_ms) {
      s.compute_ms = ms;
      s.compute_roof = roof_text(best_roof, *best);
    }
  }
  if (warm_l2) {
    const Ceiling* l2 = c.find(Roof::kL2Read);
    if (!l2 || !(l2->value > 0)) return input_error("no L2 read ceiling for " + c.gpu_name + " (needed with --l2 warm)");
    s.bytes = m.bytes_min;
    s.memory_ms = s.bytes / (l2->value * 1e9) * 1e3;
    s.memory_roof = roof_text(Roof::kL2Read, *l2);
  } else {
    auto roof = c.dram_roof();  // the fastest DRAM rate of any mix
    const Ceiling* dram = roof ? c.find(*roof) : nullptr;
    if (!dram || !(dram->value > 0)) return input_error("no DRAM bandwidth ceiling for " + c.gpu_name);
    const double l2 = static_cast<double>(std::max(l2_bytes, 0LL));
    // Reads must come from DRAM after the flush; written lines may still sit in the L2 when the kernel ends.
    s.bytes = m.bytes_read_min && m.bytes_written_min ? *m.bytes_read_min + std::max(0.0, *m.bytes_written_min - l2)
                                                      : std::max(0.0, m.bytes_min - l2);
    s.memory_ms = s.bytes / (dram->value * 1e9) * 1e3;
    s.memory_roof = roof_text(*roof, *dram);
  }
  s.floor_ms = std::max(s.compute_ms, s.memory_ms);
  return s;
}

std::optional<std::string> below_speed_of_light(const SpeedOfLight& s, double median_ms, double margin) {
  if (!(s.floor_ms > 0) || !(median_ms > 0) || median_ms >= s.floor_ms * (1 - margin)) return std::nullopt;
  const std::string why = s.binding_compute()
                              ? fmt::format("{:.4g} FLOP at {}", s.flops, s.compute_roof)
                              : fmt::format("{:.4g} bytes at {}", s.bytes, s.memory_roof);
  return fmt::format("{:.4f} ms is below the speed-of-light floor {:.4f} ms ({}; margin {:.0f}%): {:.1f}x faster than "
                     "this GPU can run it",
                     median_ms, s.floor_ms, why, 100 * margin, s.floor_ms / median_ms);
}

util::Json to_json(const SpeedOfLight& s) {
  return {{"floor_ms", s.floor_ms},   {"compute_ms", s.compute_ms},     {"memory_ms", s.memory_ms},
          {"flops", s.flops},         {"bytes", s.bytes},               {"compute_roof", s.compute_roof},
          {"memory_roof", s.memory_roof}, {"margin", kSpeedOfLightMargin}};
}

}  // namespace kopt::roofline
