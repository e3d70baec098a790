#include "loop/strategy_memory.h"

#include "search/selection.h"

namespace kopt::loop {

std::string roofline_position(const util::Json& roofline) {
  if (roofline.is_object() && roofline.contains("bound") && roofline["bound"].is_string()) {
    const std::string b = roofline["bound"].get<std::string>();
    if (b == "memory" || b == "compute" || b == "latency") return b;
  }
  return "unknown";
}

std::map<std::string, MethodTally> tally_outcomes(const std::vector<db::MethodOutcome>& outcomes, const std::string& position,
                                                 const std::string& exclude_run_dir) {
  std::map<std::string, MethodTally> t;
  for (const auto& o : outcomes) {
    if (o.position != position || o.method.empty()) continue;
    if (!exclude_run_dir.empty() && o.run_dir == exclude_run_dir) continue;
    if (o.outcome == "paid") ++t[o.method].paid;
    else if (o.outcome == "adopted") ++t[o.method].adopted;
    else if (o.outcome == "no_gain") ++t[o.method].no_gain;
  }
  return t;
}

std::map<std::string, double> method_bonus(const std::map<std::string, MethodTally>& tallies) {
  std::map<std::string, double> out;
  for (const auto& [id, t] : tallies) {
    if (t.tried() == 0) continue;
    const double rate = (t.paid + 0.5 * t.adopted + 1.0) / (t.tried() + 2.0);
    out[id] = search::kMaxMethodBonus * (2 * rate - 1);
  }
  return out;
}

std::string outcome_of(const std::string& verdict, bool measured_gain) {
  if (verdict == "effective" || verdict == "effective_measured" || (verdict == "unverified" && measured_gain)) return "paid";
  if (verdict == "ineffective" || verdict == "implementation_failed") return "no_gain";
  return "adopted";  // unverified without a measured saving, not_ablatable: on in a crowned champion, worth unknown
}

util::Json strategy_memory_json(const std::string& position, const std::map<std::string, MethodTally>& tallies,
                                const std::map<std::string, double>& bonus) {
  util::Json evidence = util::Json::object();
  for (const auto& [id, t] : tallies) evidence[id] = {{"paid", t.paid}, {"adopted", t.adopted}, {"no_gain", t.no_gain}};
  return {{"position", position}, {"bonus", bonus}, {"evidence", evidence}};
}

}  // namespace kopt::loop
