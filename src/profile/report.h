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
// Writes r.json_path (write_metrics_json) and r.summary_path.
Status write_profile_outputs(const ProfileResult& r);
// Writes a metrics JSON (<name>_metrics.json, kind "profile"): `body` is to_json of a ProfileResult, or the profile
// cache's copy of it (loop/profiling.cpp), so a cached profile leaves the same file a fresh one does.
Status write_metrics_json(const std::filesystem::path& path, const util::Json& body);
// Where a profile named `name` leaves its metrics JSON: <out_dir>/<name>_metrics.json.
std::filesystem::path metrics_json_path(const std::filesystem::path& out_dir, const std::string& name);

}  // namespace kopt::profile
