#pragma once
// What a run decided, named by configuration (parameter values, methods on, flags) rather than by candidate id or
// time, so that two runs of the same kernel with the same seeds (two kopt builds, two machines) can be compared by
// their choices: per iteration the configurations it proposed and the champion it ended the iteration with, each
// ablation's verdict, and how the search stopped. Pure: reads load_run documents (report/run_data.h).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "record/fields.h"
#include "util/json_io.h"

namespace kopt::report {

struct RunDecisions {
  std::map<int, std::set<std::string>> proposed;  // iteration -> the configurations its batch measured
  std::map<int, std::string> champion;            // iteration -> the champion's configuration after it
  std::map<int, std::set<std::string>> verdicts;  // iteration -> "method m: effective", "param P: helps"
  // iteration -> configuration -> how its race as a finalist ended there ("kept the incumbent: ... ambiguous ...")
  std::map<int, std::map<std::string, std::string>> races;
  std::string stop_reason;
  int iterations = 0;
};

// A candidate's configuration in words: "BLOCK=128 ITEMS=8 +vectorized_access -Xptxas=-v" (parameters by name, then the
// methods on, then the flags); the baseline is "baseline".
std::string configuration_text(const util::Json& candidate);

// Throws record::RecordError (through candidate_rows) on a malformed document.
RunDecisions run_decisions(const util::Json& run);

// The two runs' decisions side by side. Every difference is listed ("iteration 2: champion: A BLOCK=128, B BLOCK=256");
// those after the first follow from it where the first changed what was measured. Where the champions differ, each
// run's race of the other's champion follows, when it raced it (`in B, A's champion ...: kept the incumbent: ...
// ambiguous`): two runs that part at a race within the noise made the same decision on different draws.
struct DecisionsDiff {
  bool same = true;
  std::optional<int64_t> first_difference;  // the iteration of the first difference (the last one for the stop)
  int64_t iterations_a = 0, iterations_b = 0;
  std::vector<std::string> differences;
  bool operator==(const DecisionsDiff&) const = default;
};
KOPT_RECORD_FIELDS(DecisionsDiff, same, first_difference, iterations_a, iterations_b, differences)
[[maybe_unused]] inline bool null_when_absent(const DecisionsDiff&) { return true; }

DecisionsDiff compare_decisions(const RunDecisions& a, const RunDecisions& b);

}  // namespace kopt::report
