#include "sass/verify.h"

#include <fmt/format.h>

#include <array>

#include "sass/pattern.h"
#include "util/strings.h"

namespace kopt::sass {

namespace {

struct StatusInfo {
  VerifyStatus status;
  std::string_view name, description;
};
constexpr std::array<StatusInfo, 5> kStatuses = {{
    {VerifyStatus::kPass, "pass", "the signature's instructions are present and nothing forbidden appears"},
    {VerifyStatus::kFail, "fail", "a required instruction is missing or a forbidden one appears"},
    {VerifyStatus::kInconclusive, "inconclusive", "nothing to check: no kernel function was found"},
    {VerifyStatus::kNotApplicable, "not_applicable", "the method has no SASS signature"},
    {VerifyStatus::kToolError, "tool_error", "the SASS could not be read (cuobjdump missing or failed)"},
}};
static_assert(kStatuses.size() == static_cast<size_t>(VerifyStatus::kToolError) + 1);

const StatusInfo& info(VerifyStatus s) {
  for (const auto& i : kStatuses)
    if (i.status == s) return i;
  return kStatuses[0];
}

Evidence evidence(const SassFunction& f, const Instruction& ins) {
  return {f.demangled, f.arch, ins.address, ins.text};
}

// Counts matches over the functions; `per_function_max` gives the count of the function with the most.
PatternCheck scan(const Pattern& p, const std::vector<const SassFunction*>& fns, bool per_function_max) {
  PatternCheck c;
  c.pattern = p.text;
  for (const auto* f : fns) {
    int in_f = 0;
    std::vector<Evidence> ex;
    for (const auto& ins : f->instructions) {
      if (ins.never_executes() || !matches(p, ins.opcode)) continue;
      ++in_f;
      if (ex.size() < kMaxExamples) ex.push_back(evidence(*f, ins));
    }
    if (per_function_max) {
      if (in_f > c.count) {
        c.count = in_f;
        c.examples = std::move(ex);
      }
    } else {
      c.count += in_f;
      for (auto& e : ex)
        if (c.examples.size() < kMaxExamples) c.examples.push_back(std::move(e));
    }
  }
  return c;
}

std::string where(const PatternCheck& c) {
  if (c.examples.empty()) return "";
  const auto& e = c.examples.front();
  return fmt::format(" (first in {} at /*{:04x}*/)", e.function, e.address);
}

}  // namespace

std::string_view to_string(VerifyStatus s) { return info(s).name; }
std::string_view describe(VerifyStatus s) { return info(s).description; }

Verification verification_error(VerifyStatus status, std::string message) {
  Verification v;
  v.status = status;
  v.message = std::move(message);
  return v;
}

Result<Verification> verify(const Signature& sig, const std::vector<const SassFunction*>& functions) {
  // Malformed patterns are input errors whatever the functions.
  auto parse_all = [](const std::vector<std::string>& texts) -> Result<std::vector<Pattern>> {
    std::vector<Pattern> out;
    for (const auto& t : texts) {
      KOPT_TRY_ASSIGN(Pattern p, parse_pattern(t));
      out.push_back(std::move(p));
    }
    return out;
  };
  std::vector<std::string> min_keys;
  for (const auto& [k, n] : sig.min_counts) min_keys.push_back(k);
  KOPT_TRY_ASSIGN(auto any, parse_all(sig.require_any));
  KOPT_TRY_ASSIGN(auto all, parse_all(sig.require_all));
  KOPT_TRY_ASSIGN(auto forbid, parse_all(sig.forbid));
  KOPT_TRY_ASSIGN(auto mins, parse_all(min_keys));

  if (sig.empty()) return verification_error(VerifyStatus::kNotApplicable, "the method has no SASS signature");
  if (functions.empty())
    return verification_error(VerifyStatus::kInconclusive, "no kernel function was found to check");

  Verification v;
  for (const auto* f : functions) v.functions.push_back(f->demangled + " [" + f->arch + "]");
  std::vector<std::string> problems;

  bool any_ok = any.empty();
  std::vector<std::string> any_texts;
  for (const auto& p : any) {
    auto c = scan(p, functions, false);
    c.rule = "require_any";
    c.ok = c.count > 0;
    any_ok = any_ok || c.ok;
    any_texts.push_back(p.text);
    v.checks.push_back(std::move(c));
  }
  if (!any_ok) problems.push_back("none of " + util::join(any_texts, ", ") + " appears");
  for (const auto& p : all) {
    auto c = scan(p, functions, false);
    c.rule = "require_all";
    c.ok = c.count > 0;
    if (!c.ok) problems.push_back(p.text + " is missing");
    v.checks.push_back(std::move(c));
  }
  for (const auto& p : forbid) {
    auto c = scan(p, functions, false);
    c.rule = "forbid";
    c.ok = c.count == 0;
    if (!c.ok) problems.push_back(fmt::format("forbidden {} appears {} times{}", p.text, c.count, where(c)));
    v.checks.push_back(std::move(c));
  }
  for (const auto& p : mins) {
    auto c = scan(p, functions, true);
    c.rule = "min_count";
    c.min_count = sig.min_counts.at(p.text);
    c.ok = c.count >= c.min_count;
    if (!c.ok) problems.push_back(fmt::format("{} appears {} times in one function, fewer than {}", p.text, c.count, c.min_count));
    v.checks.push_back(std::move(c));
  }
  v.status = problems.empty() ? VerifyStatus::kPass : VerifyStatus::kFail;
  if (problems.empty()) {
    std::vector<std::string> seen;
    for (const auto& c : v.checks)
      if (c.rule != "forbid" && c.count > 0) seen.push_back(fmt::format("{} x{}", c.pattern, c.count));
    v.message = seen.empty() ? "no forbidden instruction appears" : "found " + util::join(seen, ", ");
  } else {
    v.message = util::join(problems, "; ");
  }
  return v;
}

util::Json to_json(const Verification& v) {
  util::Json checks = util::Json::array();
  for (const auto& c : v.checks) {
    util::Json ex = util::Json::array();
    for (const auto& e : c.examples)
      ex.push_back({{"function", e.function}, {"arch", e.arch}, {"address", fmt::format("{:04x}", e.address)},
                    {"instruction", e.instruction}});
    util::Json jc = {{"rule", c.rule}, {"pattern", c.pattern}, {"count", c.count}, {"ok", c.ok}, {"examples", ex}};
    if (c.rule == "min_count") jc["min_count"] = c.min_count;
    checks.push_back(std::move(jc));
  }
  return {{"status", std::string(to_string(v.status))}, {"message", v.message}, {"functions", v.functions},
          {"checks", checks}};
}

}  // namespace kopt::sass
