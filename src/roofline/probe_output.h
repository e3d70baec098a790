#pragma once
// The ceilings probe's output (one JSON object on stdout; see ceilings_probe.cu and docs/ROOFLINE.md) and its
// conversion into Ceilings. Pure functions, tested on a realistic sample.
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "roofline/ceilings.h"

namespace kopt::roofline {

struct ProbeMeasurement {
  std::string name;  // a Roof name ("dram_copy", "bf16_tensor", ...)
  bool skipped = false;
  std::string reason;  // when skipped
  std::string unit;
  double value = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
  std::string note;
};

struct ProbeOutput {
  std::string gpu_name, uuid;
  std::string driver_version;  // the display driver, from NVML; empty when NVML was not available
  int cuda_driver_version = 0;  // e.g. 13000
  int sm_clock_max_mhz = 0, mem_clock_max_mhz = 0;
  std::vector<ProbeMeasurement> measurements;
  util::Json device, clocks_seen, config;  // kept verbatim for the record
};

// Reads the probe's stdout: the JSON object may be preceded by other lines (it starts at the first line that
// begins with '{'). An output that carries "error" (the probe could not use the device) is an Error (exit 3).
Result<ProbeOutput> parse_probe_output(std::string_view stdout_text);

// Measured roofs become Ceilings (source=measured); skipped ones are listed with their reason. A measurement
// with an unknown name, a unit other than the roof's, or a non-positive value is an error.
Result<Ceilings> ceilings_from_probe(const ProbeOutput& p, const CeilingsKey& key, std::string measured_at);

}  // namespace kopt::roofline
