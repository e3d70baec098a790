#pragma once
// What ncu collects. Pass 1 is cheap (SpeedOfLight, LaunchStats, Occupancy) and classifies the call; pass 2
// adds the sections its binding axes need. The plan chosen on the first profile of a run is then fixed:
// every later profile of the run collects exactly the same sections and metrics (like with like).
#include <optional>
#include <string>
#include <vector>

#include "core/axis.h"
#include "core/result.h"
#include "util/json_io.h"

namespace kopt::profile {

// --cache-control: kAll flushes every cache before each replay pass (the default; see docs/PROFILING.md).
enum class CacheControl { kAll, kNone };
std::string_view describe(CacheControl c);  // "all" / "none"

// How much of pass 2 was kept: kFull (every section of the binding axes), kLight (one section per axis,
// after kFull failed or ran past its budget), kBase (pass-1 sections only).
enum class PlanLevel { kFull, kLight, kBase };
std::string_view describe(PlanLevel l);  // "full" / "light" / "base"
std::optional<PlanLevel> parse_plan_level(std::string_view s);

const std::vector<std::string>& pass1_sections();
// Sections for the axes at a level, pass-1 sections first, no duplicates.
std::vector<std::string> sections_for(const std::vector<Axis>& axes, PlanLevel level);
// Registry metrics of the axes (with their scale metrics), for --metrics.
std::vector<std::string> registry_metrics_for(const std::vector<Axis>& axes);

struct ProfilePlan {
  bool fixed = false;                    // set by the first profile_call of a run; later calls reuse it
  std::vector<Axis> axes;                // binding axes found by pass 1, primary first
  PlanLevel level = PlanLevel::kBase;
  std::vector<std::string> sections;     // --section, in order
  std::vector<std::string> metrics;      // --metrics (registry metrics the chip has); empty: sections only
  std::vector<std::string> unavailable;  // requested metrics --query-metrics did not list
  std::string reason;                    // why these axes and this level
};
util::Json to_json(const ProfilePlan& p);
Result<ProfilePlan> plan_from_json(const util::Json& j);

struct NcuProfileArgs {
  std::string ncu;                        // path of ncu
  std::vector<std::string> sections;
  std::vector<std::string> metrics;
  CacheControl cache_control = CacheControl::kAll;
  std::string report_base;                // -o: ncu adds ".ncu-rep"
  std::vector<std::string> target_argv;   // the runner child: calls cuProfilerStart/Stop around one solve()
  bool print_raw = true;                  // --csv --page raw: the raw page on stdout as well, read without an import
};
// ncu --profile-from-start off --target-processes all --clock-control none --cache-control all
//     --section S... [--metrics a,b] [--csv --page raw] -o BASE -f TARGET...
std::vector<std::string> ncu_profile_command(const NcuProfileArgs& a);
std::vector<std::string> ncu_import_command(const std::string& ncu, const std::string& report, const std::string& page,
                                            bool csv);
std::vector<std::string> ncu_query_metrics_command(const std::string& ncu, const std::string& chip);
std::vector<std::string> ncu_version_command(const std::string& ncu);

}  // namespace kopt::profile
