#include "loop/multi_case.h"

#include <fmt/format.h>

#include <cmath>

#include "util/strings.h"

namespace kopt::loop {

namespace {
constexpr double kZ95 = 1.959963984540054;

util::Json opt(const std::optional<double>& v) { return v ? util::Json(*v) : util::Json(nullptr); }
}  // namespace

runner::PairedComparison MultiCaseComparison::as_paired() const {
  runner::PairedComparison p;
  p.rounds = rounds;
  p.median_ratio = geomean_ratio;
  p.ci95_low = ci95_low;
  p.ci95_high = ci95_high;
  p.verdict = verdict;
  return p;
}

MultiCaseComparison combine_cases(const std::vector<CaseComparison>& cases, double min_effect) {
  MultiCaseComparison m;
  m.cases = cases;
  double wsum = 0;
  for (const auto& c : cases) wsum += c.weight > 0 ? c.weight : 0;
  double log_g = 0, var = 0;
  for (const auto& c : cases) {
    const auto& p = c.cmp;
    m.rounds += p.rounds;
    if (!runner::usable(p) || c.weight <= 0) {
      m.invalid.push_back(c.case_name);
      continue;
    }
    const double w = c.weight / wsum;
    const double se = (std::log(p.ci95_high) - std::log(p.ci95_low)) / (2 * kZ95);
    log_g += w * std::log(p.median_ratio);
    var += w * w * se * se;
    if (p.verdict == runner::Verdict::kSlower)
      m.regressions.push_back(fmt::format("{}: {:.1f}% slower (95% CI [{:.3f}, {:.3f}])", c.case_name,
                                          100 * (p.median_ratio - 1), p.ci95_low, p.ci95_high));
  }
  m.valid = !cases.empty() && m.invalid.empty() && wsum > 0;
  if (!m.valid) return m;  // ambiguous: a case without evidence is not evidence of no change
  m.log_se = std::sqrt(var);
  m.geomean_ratio = std::exp(log_g);
  m.ci95_low = std::exp(log_g - kZ95 * m.log_se);
  m.ci95_high = std::exp(log_g + kZ95 * m.log_se);
  if (m.ci95_high < 1.0 - min_effect) m.verdict = runner::Verdict::kFaster;
  else if (m.ci95_low > 1.0 + min_effect) m.verdict = runner::Verdict::kSlower;
  else if (m.ci95_low >= 1.0 - min_effect && m.ci95_high <= 1.0 + min_effect) m.verdict = runner::Verdict::kSame;
  else m.verdict = runner::Verdict::kAmbiguous;
  return m;
}

util::Json to_json(const MultiCaseComparison& m) {
  util::Json cases = util::Json::array();
  for (const auto& c : m.cases) cases.push_back({{"case", c.case_name}, {"weight", c.weight}, {"comparison", runner::to_json(c.cmp)}});
  return {{"valid", m.valid},
          {"method", "weighted geometric mean of per-case median ratios; 95% CI by the delta method on ln"},
          {"geomean_ratio", m.geomean_ratio},
          {"ci95_low", m.ci95_low},
          {"ci95_high", m.ci95_high},
          {"log_se", m.log_se},
          {"verdict", runner::describe(m.verdict)},
          {"rounds", m.rounds},
          {"regressions", m.regressions},
          {"invalid_cases", m.invalid},
          {"cases", cases}};
}

SelectionOutcome decide_over_cases(const Contender& inc, const Contender& fin, const MultiCaseComparison& m,
                                   bool no_regressions) {
  if (!m.valid) {
    SelectionOutcome out;
    out.champion_id = inc.id;
    out.reason = fin.id + ": no usable paired comparison at case(s) " + util::join(m.invalid, ", ") +
                 "; the incumbent keeps its place";
    return out;
  }
  if (!m.regressions.empty() && no_regressions) {
    SelectionOutcome out;
    out.champion_id = inc.id;
    out.reason = fin.id + " is slower than " + inc.id + " beyond the noise at " + util::join(m.regressions, "; ") +
                 ": rejected under --no-regressions";
    return out;
  }
  SelectionOutcome out = decide(inc, fin, m.as_paired());
  out.reason += fmt::format(" [weighted geometric mean over {} case(s): {:.3f}, 95% CI [{:.3f}, {:.3f}]]", m.cases.size(),
                            m.geomean_ratio, m.ci95_low, m.ci95_high);
  if (!m.regressions.empty()) out.reason += "; flagged: slower at " + util::join(m.regressions, "; ");
  return out;
}

std::optional<double> weighted_geomean_ratio(const std::vector<CaseTimes>& cases) {
  double log_sum = 0, wsum = 0;
  for (const auto& c : cases) {
    if (!(c.incumbent_ms > 0) || !(c.candidate_ms > 0) || !(c.weight > 0)) return std::nullopt;
    log_sum += c.weight * std::log(c.candidate_ms / c.incumbent_ms);
    wsum += c.weight;
  }
  if (wsum <= 0) return std::nullopt;
  return std::exp(log_sum / wsum);
}

AllCasesVerdict correct_at_every_case(const std::vector<CaseCheck>& checks) {
  AllCasesVerdict v;
  for (const auto& c : checks) {
    if (runner::is_correct(c.status)) continue;
    v.correct = false;
    v.first_failing_case = c.case_name;
    v.reason = fmt::format("{} at case {}: {}", runner::describe(c.status), c.case_name, c.message);
    return v;
  }
  if (checks.empty()) {
    v.correct = false;
    v.reason = "not checked at any case";
  }
  return v;
}

util::Json case_table_json(const std::vector<CaseRow>& rows) {
  util::Json cases = util::Json::array();
  double log_sum = 0, wsum = 0;
  int with_both = 0;
  for (const auto& r : rows) {
    std::optional<double> ratio, speedup, efficiency;
    if (r.champion_vs_baseline && r.champion_vs_baseline->median_ratio > 0) {
      ratio = r.champion_vs_baseline->median_ratio;  // the paired median wins over the ratio of medians
    } else if (r.baseline_ms && r.champion_ms && *r.baseline_ms > 0 && *r.champion_ms > 0) {
      ratio = *r.champion_ms / *r.baseline_ms;
    }
    if (ratio) {
      speedup = 1 / *ratio;
      log_sum += r.weight * std::log(*ratio);
      wsum += r.weight;
      ++with_both;
    }
    if (r.floor_ms && r.champion_ms && *r.champion_ms > 0) efficiency = *r.floor_ms / *r.champion_ms;
    util::Json row = {{"name", r.name},           {"requested", r.requested}, {"realised", r.realised},
                      {"fitted", r.requested != r.realised}, {"weight", r.weight}, {"baseline_ms", opt(r.baseline_ms)},
                      {"champion_ms", opt(r.champion_ms)}, {"ratio", opt(ratio)}, {"speedup", opt(speedup)},
                      {"floor_ms", opt(r.floor_ms)},  {"efficiency", opt(efficiency)}, {"note", r.note}};
    if (r.champion_vs_baseline) {
      row["ratio_ci95"] = {r.champion_vs_baseline->ci95_low, r.champion_vs_baseline->ci95_high};
      row["verdict"] = runner::describe(r.champion_vs_baseline->verdict);
    }
    cases.push_back(std::move(row));
  }
  util::Json geo = {{"cases", with_both}, {"ratio", nullptr}, {"speedup", nullptr}};
  if (wsum > 0) {
    double g = std::exp(log_sum / wsum);
    geo["ratio"] = g;
    geo["speedup"] = 1 / g;
  }
  return {{"cases", cases}, {"geomean", geo}};
}

}  // namespace kopt::loop
