#pragma once
// Rule results of an Nsight Compute report's details page: the guidance ncu attaches to a section
// ("OPT   Est. Local Speedup: 85.36%  On average, each warp of this workload spends 59.8 cycles ...").
// Two readers: the CSV page (`ncu --import R --csv --page details`, what kopt runs) and the text page (the
// human-readable default, the fallback when the CSV carries no rule columns).
#include <optional>
#include <string>
#include <vector>

namespace kopt::profile {

enum class RuleType { kOpt, kInf, kWrn, kErr, kOther };
std::string_view describe(RuleType t);  // "OPT", "INF", "WRN", "ERR", "?"
RuleType parse_rule_type(std::string_view s);

struct RuleResult {
  int kernel_id = -1;           // ID column (CSV) or the kernel's ordinal (text page)
  std::string kernel_name;
  std::string section;          // section identifier ("SpeedOfLight") when known, else its display name
  std::string rule;             // rule identifier ("SOLBottleneck"); empty on the text page
  RuleType type = RuleType::kOther;
  std::string message;          // one line, ncu's @section/@url markup resolved
  std::optional<double> speedup_pct;  // "Est. Local Speedup" / "Estimated Speedup"
  std::string speedup_type;     // "local" or "global" when ncu said
};

// Parses the details CSV by column names; `has_rule_columns` tells whether the page had "Rule Name"/
// "Rule Type"/"Rule Description" (older ncu versions do not).
struct DetailsRules {
  bool has_rule_columns = false;
  std::vector<RuleResult> rules;
};
DetailsRules parse_details_csv(const std::string& text);

// Parses the human-readable details page (ncu's default output).
std::vector<RuleResult> parse_details_text(const std::string& text);

// "@section:MemoryWorkloadAnalysis:Memory Workload Analysis@" -> "Memory Workload Analysis";
// "@url:Profiling Guide:https://x@" -> "Profiling Guide (https://x)". Collapses runs of spaces.
std::string strip_rule_markup(const std::string& message);

// Section identifier for a display name ("GPU Speed Of Light Throughput" -> "SpeedOfLight"); returns the
// input when it is already an identifier or unknown.
std::string section_identifier(const std::string& name_or_id);

}  // namespace kopt::profile
