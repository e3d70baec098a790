#pragma once
// The built-in parameter search: given every configuration measured so far, propose the next K
// configurations of a discrete, constrained space. Pure and deterministic for a seed (docs/SEARCH.md).
//
// Phase 1 (few observations): a Latin-hypercube-like design over the allowed values, repaired to satisfy
// the constraints, chosen among several draws for the largest minimum distance to everything measured.
// Phase 2: a surrogate of log(time) — an additive per-parameter-value model fitted by backfitting, plus a
// k-nearest-neighbour correction of its residuals — ranks unmeasured configurations. Each batch holds the
// best predicted neighbour of the incumbent (local search), the best lower-confidence-bound picks (model),
// and, from K >= 4, one space-filling exploration point per four slots.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "search/space.h"

namespace kopt::search {

struct Observation {
  Config config;
  std::optional<double> time_ms;  // nullopt: the configuration failed (compile, correctness, crash)
  // A failure that left this share of an output never written (0 < f <= 1): the feasibility model's signal
  // (search/feasibility.h). nullopt: measured correct, or a failure of another kind.
  std::optional<double> unwritten_fraction;
};

// A point the caller asks the search to measure first, with the reason its proposal carries (e.g. a warm start: the
// best configurations of the nearest shapes measured before, loop/warm_start.h).
struct Suggestion {
  Config config;
  std::string reason;
};

struct StrategyInput {
  const SearchSpace* space = nullptr;
  // Per dimension, the value indices this iteration may use (one index: the dimension is pinned).
  // Empty: every value of every dimension.
  std::vector<std::vector<int>> allowed;
  // Per dimension, a value index the first proposal (the incumbent carried into this iteration) takes when
  // allowed, or -1: e.g. a method picked this iteration switched on, the cleanest test of it. Empty: none.
  std::vector<int> prefer;
  std::vector<Observation> history;
  // Configurations not to propose that are not observations (e.g. proposed already in this batch by another call).
  std::vector<Config> exclude;
  // Points to measure first, in order: each batch starts with those not yet measured (valid in the space; they need
  // not lie in `allowed`: they were measured good elsewhere), up to K, ahead of the incumbent and the first design.
  // Invalid ones (out of range, breaking a constraint) and measured ones are skipped.
  std::vector<Suggestion> suggested;
  int k = 4;
  uint64_t seed = 1;
};

struct Proposal {
  Config config;
  std::string reason;  // "initial design", "neighbour of the incumbent", "model", "exploration", a suggestion's own
  std::optional<double> predicted_ms;
};

// At most K configurations, valid, distinct, none already in the history, none the feasibility model predicts
// infeasible (search/feasibility.h: learnt from the history's under-coverage failures; a history without them
// changes nothing); fewer when the allowed space runs out.
std::vector<Proposal> propose_configs(const StrategyInput& in);

// What is left in the allowed space, as the surrogate sees it after everything in the history.
struct Outlook {
  long remaining = -1;                // valid configurations not measured yet; -1: too many to enumerate
  // The lowest lower bound over them: the surrogate's prediction less twice its demonstrated error (the RMS of
  // its additive part's residuals on the measurements).
  std::optional<double> best_lcb_ms;
  std::optional<Config> best_config;  // where that bound is
  int observations = 0;               // history entries inside the space (failures included)
  // Valid, unmeasured configurations left out because the feasibility model predicts them infeasible (counted when
  // the allowed space is enumerated; not part of `remaining`).
  long predicted_infeasible = 0;
};
Outlook space_outlook(const StrategyInput& in);

}  // namespace kopt::search
