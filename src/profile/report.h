#pragma once
// What a profile leaves behind: the metrics JSON (every number with its unit, unknown as null) and a short
// summary a person reads.
#include <string>

#include "core/result.h"
#include "profile/profiler.h"
#include "util/json_io.h"

namespace kopt::profile {

util::Json to_json(const ProfileResult& r);
// Per kernel: name, duration, SOL compute and memory %, achieved occupancy; then the binding axes and the
// top metrics per axis with ncu's rule messages; missing metrics; the report path.
std::string format_summary(const ProfileResult& r, int top_n);
// Writes r.json_path (kind "profile") and r.summary_path.
Status write_profile_outputs(const ProfileResult& r);

}  // namespace kopt::profile
