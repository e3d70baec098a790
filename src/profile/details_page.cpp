#include "profile/details_page.h"

#include <algorithm>
#include <array>
#include <regex>
#include <utility>

#include "profile/csv.h"
#include "util/strings.h"

namespace kopt::profile {

namespace {

struct RuleTypeName {
  RuleType type;
  std::string_view name;
};
constexpr std::array<RuleTypeName, 5> kRuleTypes = {
    {{RuleType::kOpt, "OPT"}, {RuleType::kInf, "INF"}, {RuleType::kWrn, "WRN"}, {RuleType::kErr, "ERR"},
     {RuleType::kOther, "?"}}};

// Standard section identifiers and the names the text page prints (ncu 2025.3.1).
constexpr std::array<std::pair<std::string_view, std::string_view>, 13> kSections = {{
    {"SpeedOfLight", "GPU Speed Of Light Throughput"},
    {"SpeedOfLight_RooflineChart", "GPU Speed Of Light Roofline Chart"},
    {"LaunchStats", "Launch Statistics"},
    {"Occupancy", "Occupancy"},
    {"MemoryWorkloadAnalysis", "Memory Workload Analysis"},
    {"MemoryWorkloadAnalysis_Tables", "Memory Workload Analysis Tables"},
    {"MemoryWorkloadAnalysis_Chart", "Memory Workload Analysis Chart"},
    {"ComputeWorkloadAnalysis", "Compute Workload Analysis"},
    {"InstructionStats", "Instruction Statistics"},
    {"WarpStateStats", "Warp State Statistics"},
    {"SchedulerStats", "Scheduler Statistics"},
    {"SourceCounters", "Source Counters"},
    {"WorkloadDistribution", "GPU and Memory Workload Distribution"},
}};

std::string collapse_spaces(const std::string& s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string_view describe(RuleType t) {
  for (const auto& r : kRuleTypes)
    if (r.type == t) return r.name;
  return "?";
}

RuleType parse_rule_type(std::string_view s) {
  for (const auto& r : kRuleTypes)
    if (r.name == s) return r.type;
  return RuleType::kOther;
}

std::string section_identifier(const std::string& name_or_id) {
  for (const auto& [id, name] : kSections)
    if (name == name_or_id) return std::string(id);
  return name_or_id;
}

std::string strip_rule_markup(const std::string& message) {
  static const std::regex url(R"(@url:([^:@]*):([^@]*)@)");
  static const std::regex other(R"(@[a-z_]+:[^:@]*:([^@]*)@)");
  std::string s = std::regex_replace(message, url, "$1 ($2)");
  s = std::regex_replace(s, other, "$1");
  return collapse_spaces(s);
}

DetailsRules parse_details_csv(const std::string& text) {
  DetailsRules out;
  std::vector<CsvRow> rows = parse_ncu_csv(text);
  if (rows.empty()) return out;
  const CsvRow& header = rows[0];
  auto column = [&](std::string_view name) -> int {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  int c_id = column("ID"), c_kernel = column("Kernel Name"), c_section = column("Section Name");
  int c_rule = column("Rule Name"), c_type = column("Rule Type"), c_desc = column("Rule Description");
  int c_sp_type = column("Estimated Speedup Type"), c_sp = column("Estimated Speedup");
  out.has_rule_columns = c_rule >= 0 && c_type >= 0 && c_desc >= 0;
  if (!out.has_rule_columns) return out;
  auto field = [](const CsvRow& r, int c) -> std::string { return c >= 0 && c < static_cast<int>(r.size()) ? r[c] : ""; };
  for (size_t i = 1; i < rows.size(); ++i) {
    const CsvRow& r = rows[i];
    std::string desc = field(r, c_desc);
    if (field(r, c_rule).empty() && desc.empty()) continue;  // a metric row
    RuleResult rr;
    auto id = parse_ncu_number(field(r, c_id));
    rr.kernel_id = id ? static_cast<int>(*id) : -1;
    rr.kernel_name = field(r, c_kernel);
    rr.section = section_identifier(field(r, c_section));
    rr.rule = field(r, c_rule);
    rr.type = parse_rule_type(field(r, c_type));
    rr.message = strip_rule_markup(desc);
    rr.speedup_pct = parse_ncu_number(field(r, c_sp));
    rr.speedup_type = field(r, c_sp_type);
    out.rules.push_back(std::move(rr));
  }
  return out;
}

std::vector<RuleResult> parse_details_text(const std::string& text) {
  // Layout (ncu 2025.3.1):
  //   "  <kernel> (grid)x(block), Context 1, Stream 7, Device 0, CC 9.0"
  //   "    Section: GPU Speed Of Light Throughput"
  //   "    OPT   Est. Local Speedup: 85.36%" or "    OPT   <first line of the message>"
  //   "          <message continued>"               (10 spaces), up to a blank line or a "-----" line
  //   "          > Key Performance Indicators: ..."  (a table that is not part of the message)
  static const std::regex kernel_re(R"(^  (\S.*) \((\d+, \d+, \d+)\)x\((\d+, \d+, \d+)\), Context .*)");
  static const std::regex rule_re(R"(^    (OPT|INF|WRN|ERR)   (.*)$)");
  static const std::regex speedup_re(R"(^Est\. (Local|Global) Speedup: ([0-9.,]+)%$)");
  std::vector<RuleResult> rules;
  int kernel_ordinal = -1;
  std::string kernel_name, section;
  RuleResult* open = nullptr;  // the rule whose message is being read
  bool in_message = false;
  std::vector<std::string> lines = util::split_lines(text);
  for (const std::string& raw : lines) {
    std::string line = raw;
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    std::smatch m;
    if (std::regex_match(line, m, kernel_re)) {
      ++kernel_ordinal;
      kernel_name = m[1];
      section.clear();
      in_message = false;
      continue;
    }
    if (util::starts_with(line, "    Section: ")) {
      section = section_identifier(line.substr(13));
      in_message = false;
      continue;
    }
    if (std::regex_match(line, m, rule_re)) {
      rules.push_back(RuleResult{});
      open = &rules.back();
      open->kernel_id = kernel_ordinal;
      open->kernel_name = kernel_name;
      open->section = section;
      open->type = parse_rule_type(m[1].str());
      std::string first = util::trim(m[2].str());
      std::smatch sm;
      if (std::regex_match(first, sm, speedup_re)) {
        open->speedup_pct = parse_ncu_number(sm[2].str());
        open->speedup_type = sm[1].str() == "Local" ? "local" : "global";
      } else {
        open->message = first;
      }
      in_message = true;
      continue;
    }
    if (!in_message || !open) continue;
    std::string body = util::trim(line);
    if (body.empty() || util::starts_with(body, "-----") || util::starts_with(body, "> ") ||
        !util::starts_with(line, "          ")) {
      in_message = false;
      continue;
    }
    open->message += (open->message.empty() ? "" : " ") + body;
  }
  for (auto& r : rules) r.message = strip_rule_markup(r.message);
  return rules;
}

}  // namespace kopt::profile
