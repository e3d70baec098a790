#pragma once
// Choosing the methods of one iteration from profile evidence (docs/SEARCH.md, "Method selection").
// Pure: registry, offered methods, champion, metrics, verdicts and the axis budget in; picks and the
// reasons for every skip out.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "search/generator.h"

namespace kopt::search {

// One evidence item that holds on the current metrics.
struct EvidenceHit {
  size_t index = 0;   // into Method::evidence
  double value = 0;   // the metric's reading
  double margin = 0;  // how far past the threshold, relative to it, capped at 1
};
// The items of `m` that hold; metrics absent from the profile never hold.
std::vector<EvidenceHit> fired_evidence(const Method& m, const std::map<std::string, double>& metrics);
// Sum over fired items of (1 + margin): more and stronger evidence ranks higher.
double evidence_score(const std::vector<EvidenceHit>& hits);
std::string describe_hit(const Method& m, const EvidenceHit& hit);  // "metric = 82.1 > 60: why"

struct SelectionInput {
  const Registry* registry = nullptr;
  std::vector<std::string> offered;  // methods this iteration may switch on (the kernel's guards, flag methods...)
  std::set<std::string> active;      // methods already on in the champion
  Plan plan;
  std::map<std::string, double> metrics;
  std::vector<MethodVerdict> verdicts;
  NumericsMode numerics = NumericsMode::kReference;
  Backend backend = Backend::kCuda;
  int arch = 90;
  // Per method id, added to its evidence score before ranking (the strategy memory, GeneratorInput::method_bonus),
  // clamped to +-kMaxMethodBonus: it reorders methods whose evidence fires, never makes one eligible or ineligible.
  std::map<std::string, double> bonus;
};

// The most the strategy memory moves a method's evidence score: half of one evidence item's least score (1), so it
// decides between methods of about equal evidence and never outranks a method with a whole item more firing.
inline constexpr double kMaxMethodBonus = 0.5;

MethodSelection select_methods(const SelectionInput& in);

// The selection input a generator shares with the loop: registry, plan, metrics, verdicts, numerics, backend
// and architecture from `in`. The generator fills `offered` and `active` (what it can switch, what is on).
SelectionInput selection_input(const GeneratorInput& in);

}  // namespace kopt::search
