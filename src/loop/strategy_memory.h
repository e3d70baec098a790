#pragma once
// The strategy memory (issue 39 item 2(c), docs/SEARCH.md "Strategy memory"): which methods paid off at which roofline
// position in past runs on this GPU (any kernel), as a bounded bonus to the method selection's evidence score. Pure:
// the database's method outcomes in, a bonus per method out.
//
// The policy: at this position, per method, paid = its outcomes "paid" plus half its "adopted", tried = all of them;
// rate = (paid + 1) / (tried + 2) (a Laplace prior of one half: one outcome moves it a little, many a lot); bonus =
// search::kMaxMethodBonus * (2 * rate - 1), in (-kMaxMethodBonus, +kMaxMethodBonus). A method with no outcome here gets
// none. The selection adds the bonus to the score of a method whose evidence fires: among methods of about equal
// evidence, the one with a record of paying off takes the budget's slot first. It never picks a method whose evidence
// does not fire, never removes one, and never changes how many methods an axis gets.
#include <map>
#include <string>
#include <vector>

#include "db/record.h"
#include "util/json_io.h"

namespace kopt::loop {

// The roofline position a method budget is split at: st_.roofline's "bound" (roofline::to_json: "memory", "compute",
// "latency"), or "unknown" when there is none (no profile, no workload model).
std::string roofline_position(const util::Json& roofline);

// One method's past outcomes at one position.
struct MethodTally {
  int paid = 0, adopted = 0, no_gain = 0;
  int tried() const { return paid + adopted + no_gain; }
};

// Per method, its outcomes at `position`, leaving out those of `exclude_run_dir` (this run: its own verdicts already
// steer its selection) and outcomes of an unknown kind.
std::map<std::string, MethodTally> tally_outcomes(const std::vector<db::MethodOutcome>& outcomes, const std::string& position,
                                                 const std::string& exclude_run_dir = "");

// The bonus per method (see above); a method without outcomes has no entry.
std::map<std::string, double> method_bonus(const std::map<std::string, MethodTally>& tallies);

// What a verdict (search::verdict_name) and its measured gain make of a method's outcome: "paid", "no_gain" or
// "adopted" (db::MethodOutcome::outcome).
std::string outcome_of(const std::string& verdict, bool measured_gain);

// state.json's strategy_memory: {"position", "bonus": {method: value}, "evidence": {method: {"paid", "adopted",
// "no_gain"}}}.
util::Json strategy_memory_json(const std::string& position, const std::map<std::string, MethodTally>& tallies,
                                const std::map<std::string, double>& bonus);

}  // namespace kopt::loop
