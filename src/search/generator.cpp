#include "search/generator.h"

#include <array>
#include <utility>

namespace kopt::search {

namespace {
struct StatusRow {
  CandidateStatus status;
  std::string_view name, description;
};
constexpr std::array<StatusRow, 5> kStatuses = {{
    {CandidateStatus::kOk, "ok", "compiled, correct and timed"},
    {CandidateStatus::kCompileFailed, "compile_failed", "did not compile"},
    {CandidateStatus::kIncorrect, "incorrect", "compiled but its results disagree with the reference"},
    {CandidateStatus::kCrashed, "crashed", "the run died (fault, abort, CUDA error)"},
    {CandidateStatus::kTimedOut, "timed_out", "the run exceeded its time limit"},
}};
struct VerdictRow {
  Verdict verdict;
  std::string_view name, description;
};
constexpr std::array<VerdictRow, 6> kVerdicts = {{
    {Verdict::kEffective, "effective", "the SASS shows the method and turning it off makes the champion measurably slower"},
    {Verdict::kMeasuredEffective, "effective_measured",
     "turning the method off makes the champion measurably slower; the SASS cannot show this method (no signature)"},
    {Verdict::kIneffective, "ineffective", "turning the method off makes no measurable difference, or helps"},
    {Verdict::kImplementationFailed, "implementation_failed", "the variant with the method failed to compile or was incorrect"},
    {Verdict::kUnverified, "unverified", "the method's SASS signature was not found in the champion"},
    {Verdict::kNotAblatable, "not_ablatable", "the method has no guard, so it cannot be switched off to measure it"},
}};
}  // namespace

std::string_view candidate_status_name(CandidateStatus s) {
  for (const auto& r : kStatuses)
    if (r.status == s) return r.name;
  return "?";
}
std::string_view describe(CandidateStatus s) {
  for (const auto& r : kStatuses)
    if (r.status == s) return r.description;
  return "?";
}
std::string_view verdict_name(Verdict v) {
  for (const auto& r : kVerdicts)
    if (r.verdict == v) return r.name;
  return "?";
}
std::string_view describe(Verdict v) {
  for (const auto& r : kVerdicts)
    if (r.verdict == v) return r.description;
  return "?";
}
std::optional<Verdict> parse_verdict(std::string_view s) {
  for (const auto& r : kVerdicts)
    if (r.name == s) return r.verdict;
  return std::nullopt;
}

std::vector<std::string> MethodSelection::ids() const {
  std::vector<std::string> out;
  for (const auto& p : picks) out.push_back(p.id);
  return out;
}

util::Json to_json(const MethodSelection& s) {
  util::Json picks = util::Json::array(), skipped = util::Json::array();
  for (const auto& p : s.picks) {
    util::Json j = {{"id", p.id}, {"axis", axis_name(p.axis)}, {"score", p.score}, {"fired", p.fired}};
    if (!p.required_by.empty()) j["required_by"] = p.required_by;
    picks.push_back(std::move(j));
  }
  for (const auto& k : s.skipped) skipped.push_back({{"id", k.id}, {"reason", k.reason}});
  return {{"picks", picks}, {"skipped", skipped}};
}

}  // namespace kopt::search
