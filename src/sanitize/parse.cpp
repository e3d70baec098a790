#include "sanitize/parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <regex>

#include "util/strings.h"

namespace kopt::sanitize {

namespace {

struct ToolRow {
  Tool t;
  std::string_view name;
};
constexpr std::array<ToolRow, 4> kTools = {
    {{Tool::kMemcheck, "memcheck"}, {Tool::kRacecheck, "racecheck"}, {Tool::kSynccheck, "synccheck"}, {Tool::kInitcheck, "initcheck"}}};

struct KindRow {
  FindingKind k;
  std::string_view name, text;
  bool rejects, rejects_warning;
};
// The gate's table: a race (at error level), an out-of-bounds or misaligned access, a device exception and a
// barrier error reject a candidate; the rest is reported. Uninitialised reads are reported, not rejecting:
// initcheck also flags reads of padding that cannot change a result (e.g. vector loads past a tail).
constexpr std::array<KindRow, 10> kKinds = {{
    {FindingKind::kOutOfBounds, "out_of_bounds", "out-of-bounds memory access", true, true},
    {FindingKind::kMisaligned, "misaligned", "misaligned memory access", true, true},
    {FindingKind::kHardwareException, "hardware_exception", "device exception", true, true},
    {FindingKind::kRaceHazard, "race_hazard", "shared-memory race hazard", true, false},
    {FindingKind::kUninitializedRead, "uninitialized_read", "read of uninitialised device memory", false, false},
    {FindingKind::kUnusedMemory, "unused_memory", "allocated memory never used", false, false},
    {FindingKind::kBarrierError, "barrier_error", "barrier error (synchronisation hazard)", true, true},
    {FindingKind::kCudaApiError, "cuda_api_error", "CUDA API error", false, false},
    {FindingKind::kLeak, "leak", "device memory leak", false, false},
    {FindingKind::kOther, "other", "other report", false, false},
}};
static_assert(kKinds.size() == static_cast<size_t>(FindingKind::kOther) + 1, "one row per kind");

const KindRow& row(FindingKind k) { return kKinds[static_cast<size_t>(k)]; }

int64_t number(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  try {
    return s.empty() ? 0 : std::stoll(s);
  } catch (const std::exception&) {
    return 0;
  }
}

std::optional<uint64_t> hex(const std::string& s) {
  try {
    return std::stoull(s, nullptr, 16);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string trim_space(const std::string& s) { return util::trim(s); }

struct Location {
  std::string function, file;
  int line = 0;
};

// "f(int)+0x70 in /path/k.cu:12", "f(int)+0x70", "0x70 in /path/k.cu:12:f(int)" (older), "f".
Location parse_location(const std::string& text) {
  static const std::regex modern(R"(^(.*)\+0x[0-9a-fA-F]+(?: in (.+?):(\d+))?$)");
  static const std::regex older(R"(^0x[0-9a-fA-F]+ in (.+?):(\d+):(.+)$)");
  Location l;
  std::smatch m;
  if (std::regex_match(text, m, older)) {
    l.file = m[1];
    l.line = static_cast<int>(number(m[2]));
    l.function = m[3];
  } else if (std::regex_match(text, m, modern)) {
    l.function = m[1];
    if (m[2].matched) {
      l.file = m[2];
      l.line = static_cast<int>(number(m[3]));
    }
  } else {
    l.function = text;
  }
  l.function = trim_space(l.function);
  return l;
}

void set_location(Finding& f, const Location& l) {
  if (f.function.empty()) f.function = l.function;
  if (f.file.empty() && !l.file.empty()) {
    f.file = l.file;
    f.line = l.line;
  }
}

void add_detail(Finding& f, const std::string& d) {
  if (d.empty()) return;
  f.detail += (f.detail.empty() ? "" : "; ") + d;
}

bool is_note(const std::string& head) {
  static const std::regex re(
      R"(^(COMPUTE-SANITIZER|LEAK SUMMARY|Target application|Error: process|Error: Target|Error: No |Internal Sanitizer|No CUDA|Note:|The application))");
  return std::regex_search(head, re);
}

// Classifies a record's head line; false when it is not a finding (a summary or a note).
bool classify(const std::string& head, Finding& f, Report& r) {
  static const std::regex summary(R"(^ERROR SUMMARY: ([\d,]+) errors?$)");
  static const std::regex not_printed(R"(^ERROR SUMMARY: ([\d,]+) errors? (?:were|was) not printed)");
  static const std::regex race_summary(R"(^RACECHECK SUMMARY: ([\d,]+) hazards? displayed \(([\d,]+) errors?, ([\d,]+) warnings?\))");
  static const std::regex invalid(R"(^Invalid (__\w+__ )?(\w+)(?: of size ([\d,]+) bytes?)?)");
  static const std::regex race_pair(R"(^(Error|Warning): Race reported between (\w+) access at (.+)$)");
  static const std::regex race_hazard(
      R"(^(Error|Warning): (?:\([^)]*\) )?Potential (RAW|WAR|WAW) hazard detected at (__\w+__ )?(0x[0-9a-fA-F]+)(?: in block (\(\d+,\s*\d+,\s*\d+\)))?)");
  static const std::regex uninit(R"(^Uninitialized (__\w+__ )?memory (\w+) of size ([\d,]+) bytes?)");
  static const std::regex unused(R"(^Unused memory in allocation (0x[0-9a-fA-F]+) of size ([\d,]+) bytes?)");
  static const std::regex api(R"(^Program hit (\w+) \(error (\d+)\) due to \"(.*)\" on CUDA API call to (\w+))");
  static const std::regex leak(R"(^Leaked ([\d,]+) bytes at (0x[0-9a-fA-F]+))");
  static const std::regex barrier(R"(barrier)", std::regex::icase);
  static const std::regex hardware(
      R"((Illegal Address|Illegal Instruction|Out-of-range Address|Invalid PC|Stack Overflow|Invalid Address Space|Assert|Malformed|Misaligned Address|Misaligned PC|Hardware exception))",
      std::regex::icase);
  std::smatch m;
  if (std::regex_search(head, m, summary)) {
    r.error_summary = number(m[1]);
    return false;
  }
  if (std::regex_search(head, m, not_printed)) {  // a second summary line past the print limit
    r.errors_not_printed = number(m[1]);
    return false;
  }
  if (std::regex_search(head, m, race_summary)) {
    r.race_hazards = number(m[1]);
    r.race_errors = number(m[2]);
    r.race_warnings = number(m[3]);
    return false;
  }
  if (is_note(head)) {
    if (head != "COMPUTE-SANITIZER") r.notes.push_back(head);
    return false;
  }
  f.head = head;
  if (std::regex_search(head, m, invalid)) {
    f.kind = FindingKind::kOutOfBounds;
    f.memory_space = trim_space(m[1]);
    f.access = m[2];
    f.access_size_bytes = static_cast<int>(number(m[3]));
  } else if (std::regex_search(head, m, race_pair)) {
    f.kind = FindingKind::kRaceHazard;
    f.warning = m[1] == "Warning";
    f.memory_space = "__shared__";
    f.access = m[2];
    set_location(f, parse_location(m[3]));
  } else if (std::regex_search(head, m, race_hazard)) {
    f.kind = FindingKind::kRaceHazard;
    f.warning = m[1] == "Warning";
    f.hazard = m[2];
    f.memory_space = m[3].matched ? trim_space(m[3]) : std::string("__shared__");
    f.address = hex(m[4]);
    f.block = m[5];
  } else if (std::regex_search(head, m, uninit)) {
    f.kind = FindingKind::kUninitializedRead;
    f.memory_space = trim_space(m[1]);
    f.access = m[2];
    f.access_size_bytes = static_cast<int>(number(m[3]));
  } else if (std::regex_search(head, m, unused)) {
    f.kind = FindingKind::kUnusedMemory;
    f.address = hex(m[1]);
    f.access_size_bytes = static_cast<int>(number(m[2]));
  } else if (std::regex_search(head, m, api)) {
    f.kind = FindingKind::kCudaApiError;
    f.function = m[4];
    f.detail = std::string(m[1]) + ": " + std::string(m[3]);
  } else if (std::regex_search(head, m, leak)) {
    f.kind = FindingKind::kLeak;
    f.access_size_bytes = static_cast<int>(number(m[1]));
    f.address = hex(m[2]);
  } else if (std::regex_search(head, barrier)) {
    f.kind = FindingKind::kBarrierError;
  } else if (std::regex_search(head, m, hardware)) {
    f.kind = std::string(m[1]).rfind("Misaligned", 0) == 0 ? FindingKind::kMisaligned : FindingKind::kHardwareException;
  } else {
    f.kind = FindingKind::kOther;
  }
  return true;
}

void continuation(const std::string& text, Finding& f) {
  static const std::regex at(R"(^at (.+)$)");
  static const std::regex by(R"(^by thread (\(\d+,\s*\d+,\s*\d+\)) in block (\(\d+,\s*\d+,\s*\d+\)))");
  // "Address 0x.. is out of bounds" (older releases), "Access to 0x.. is out of bounds" (2025.3)
  static const std::regex address(R"(^(?:Address|Access to) (0x[0-9a-fA-F]+)\s*(.*)$)");
  static const std::regex pair_second(R"(^and (\w+) access at (.+?)(?: \[([\d,]+) hazards?\])?$)");
  static const std::regex thread_access(R"(^(\w+) Thread (\(\d+,\s*\d+,\s*\d+\)) at (.+)$)");
  static const std::regex skip(R"(^(Saved host backtrace|Host Frame|Device Frame|in /|in [^ ]+\.so|#\d+))");
  std::smatch m;
  if (std::regex_search(text, skip)) return;
  if (std::regex_match(text, m, at)) {
    set_location(f, parse_location(m[1]));
  } else if (std::regex_search(text, m, by)) {
    if (f.thread.empty()) {
      f.thread = m[1];
      f.block = m[2];
    }
  } else if (std::regex_match(text, m, address)) {
    if (!f.address) f.address = hex(m[1]);
    std::string rest = m[2];
    if (rest.find("misaligned") != std::string::npos && f.kind == FindingKind::kOutOfBounds) f.kind = FindingKind::kMisaligned;
    add_detail(f, rest);
  } else if (f.kind == FindingKind::kRaceHazard && std::regex_match(text, m, pair_second)) {
    const Location second = parse_location(m[2]);
    f.access += "/" + std::string(m[1]);
    add_detail(f, fmt::format("and {} access at {}{}", std::string(m[1]), second.function,
                              second.file.empty() ? "" : " in " + second.file + ":" + std::to_string(second.line)));
    if (m[3].matched) f.count = number(m[3]);
  } else if (f.kind == FindingKind::kRaceHazard && std::regex_match(text, m, thread_access)) {
    const Location l = parse_location(m[3]);
    if (f.thread.empty()) {
      f.thread = m[2];
      f.access = m[1];
      set_location(f, l);
    } else {
      f.access += "/" + std::string(m[1]);
      add_detail(f, fmt::format("{} thread {} at {}{}", std::string(m[1]), std::string(m[2]), l.function,
                                l.file.empty() ? "" : " in " + l.file + ":" + std::to_string(l.line)));
    }
  } else {
    add_detail(f, text);
  }
}

bool same_finding(const Finding& a, const Finding& b) {
  return a.tool == b.tool && a.kind == b.kind && a.warning == b.warning && a.function == b.function && a.file == b.file &&
         a.line == b.line && a.access == b.access && a.hazard == b.hazard && a.memory_space == b.memory_space &&
         (a.kind != FindingKind::kOther || a.head == b.head);
}

}  // namespace

std::string_view tool_name(Tool t) { return kTools[static_cast<size_t>(t)].name; }
std::optional<Tool> parse_tool(std::string_view name) {
  for (const auto& r : kTools)
    if (r.name == name) return r.t;
  return std::nullopt;
}
std::string_view kind_name(FindingKind k) { return row(k).name; }
std::string_view describe(FindingKind k) { return row(k).text; }
bool rejects(FindingKind k, bool is_warning) { return is_warning ? row(k).rejects_warning : row(k).rejects; }
std::optional<FindingKind> parse_kind(std::string_view name) {
  for (const auto& r : kKinds)
    if (r.name == name) return r.k;
  return std::nullopt;
}

std::string Finding::kernel() const {
  auto p = function.find('(');
  return util::trim(p == std::string::npos ? function : function.substr(0, p));
}

std::string Finding::text() const {
  std::string what;
  switch (kind) {
    case FindingKind::kOutOfBounds:
    case FindingKind::kMisaligned:
      what = fmt::format("{} {}{} of {} bytes", kind == FindingKind::kMisaligned ? "misaligned" : "out-of-bounds",
                         memory_space.empty() ? "" : memory_space + " ", access, access_size_bytes);
      break;
    case FindingKind::kRaceHazard:
      what = fmt::format("{} race hazard{} ({})", memory_space == "__shared__" || memory_space.empty() ? "shared-memory" : memory_space,
                         warning ? " (warning level)" : "", hazard.empty() ? access : hazard + ", " + access);
      break;
    case FindingKind::kUninitializedRead:
      what = fmt::format("{} of uninitialised {}memory ({} bytes)", access, memory_space.empty() ? "" : memory_space + " ", access_size_bytes);
      break;
    default: what = head; break;
  }
  std::string where = kernel().empty() ? "" : " in " + kernel();
  if (!file.empty()) where += " at " + file + ":" + std::to_string(line);
  return fmt::format("{}: {}{}{}", tool_name(tool), what, where, count > 1 ? fmt::format(" ({} times)", count) : "");
}

int64_t Report::rejecting() const {
  int64_t n = 0;
  for (const auto& f : findings)
    if (rejects(f.kind, f.warning)) n += f.count;
  return n;
}

Report parse_text(Tool tool, std::string_view output) {
  Report r;
  r.tool = tool;
  std::optional<Finding> open;
  auto close = [&]() {
    if (!open) return;
    auto same = std::find_if(r.findings.begin(), r.findings.end(), [&](const Finding& g) { return same_finding(g, *open); });
    if (same != r.findings.end()) same->count += open->count;
    else r.findings.push_back(std::move(*open));
    open.reset();
  };
  for (std::string line : util::split_lines(output)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("=========", 0) != 0) {
      if (!util::trim(line).empty()) ++r.program_lines;
      continue;
    }
    std::string body = line.substr(9);
    if (!body.empty() && body.front() == ' ') body.erase(0, 1);
    if (util::trim(body).empty()) {
      close();
      continue;
    }
    if (body.front() == ' ' || body.front() == '\t') {  // a continuation of the open record
      if (open) continuation(util::trim(body), *open);
      continue;
    }
    close();
    Finding f;
    f.tool = tool;
    if (classify(util::trim(body), f, r)) open = std::move(f);
  }
  close();
  return r;
}

util::Json to_json(const Finding& f) {
  return {{"tool", tool_name(f.tool)},
          {"kind", kind_name(f.kind)},
          {"level", f.warning ? "warning" : "error"},
          {"rejects", rejects(f.kind, f.warning)},
          {"kernel", f.kernel()},
          {"function", f.function},
          {"file", f.file},
          {"line", f.line},
          {"address", f.address ? util::Json(fmt::format("{:#x}", *f.address)) : util::Json(nullptr)},
          {"memory_space", f.memory_space},
          {"access", f.access},
          {"hazard", f.hazard},
          {"access_size_bytes", f.access_size_bytes},
          {"thread", f.thread},
          {"block", f.block},
          {"count", f.count},
          {"detail", f.detail},
          {"head", f.head},
          {"text", f.text()}};
}

util::Json to_json(const Report& r) {
  util::Json fs = util::Json::array();
  for (const auto& f : r.findings) fs.push_back(to_json(f));
  auto opt = [](const std::optional<int64_t>& v) { return v ? util::Json(*v) : util::Json(nullptr); };
  return {{"tool", tool_name(r.tool)},       {"finished", r.finished()},     {"error_summary", opt(r.error_summary)},
          {"errors_not_printed", opt(r.errors_not_printed)}, {"race_hazards", opt(r.race_hazards)},
          {"race_errors", opt(r.race_errors)}, {"race_warnings", opt(r.race_warnings)},
          {"rejecting", r.rejecting()},      {"findings", fs},               {"notes", r.notes}};
}

}  // namespace kopt::sanitize
