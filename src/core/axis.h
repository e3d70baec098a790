#pragma once
// The three axes along which kopt splits its method budget.
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace kopt {

enum class Axis { kCompute, kMemory, kLatency };
inline constexpr std::array<Axis, 3> kAllAxes = {Axis::kCompute, Axis::kMemory, Axis::kLatency};

constexpr std::string_view axis_name(Axis a) {
  switch (a) {
    case Axis::kCompute: return "compute";
    case Axis::kMemory: return "memory";
    case Axis::kLatency: return "latency";
  }
  return "?";
}

inline std::optional<Axis> parse_axis(std::string_view s) {
  for (Axis a : kAllAxes)
    if (axis_name(a) == s) return a;
  return std::nullopt;
}

}  // namespace kopt
