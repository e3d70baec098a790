#pragma once
// A run's measurements in the formats other tools read: Kernel Tuner's T4 results format and a CSV with one row
// per measured candidate. Pure: both take load_run's document (with samples, for T4's runtimes).
#include <string>

#include "util/json_io.h"

namespace kopt::report {

// The T4 results schema version written (kernel_tuner/schema/T4/1.0.0/results-schema.json; a copy with its
// source is in tests/data/report/t4/).
inline constexpr const char* kT4SchemaVersion = "1.0.0";

// {"schema_version", "metadata": {"timeunit": "milliseconds", "kopt": {...}}, "results": [...]}: one result per
// measured candidate (the baseline and the ablation builds included) with its configuration (parameters and
// method guards KOPT_<METHOD> as 0/1), times (compilation_time, runtimes: every timing sample, ms),
// invalidity (correct | compile | runtime | correctness | timeout), correctness (1 or 0), measurements (time:
// the median, with the 95% CI bounds) and objectives ["time"], as Kernel Tuner's get_t4_results writes them; each
// result also carries "kopt" (id, iteration, role, methods, status, reason), which T4 readers ignore.
util::Json t4_results(const util::Json& run);

// Header: id,iteration,role,<every parameter, sorted>,methods,median_ms,ci95_low_ms,ci95_high_ms,status,reason.
// RFC 4180 quoting; methods joined with '+'; empty cells for unknown values.
std::string candidates_csv(const util::Json& run);

}  // namespace kopt::report
