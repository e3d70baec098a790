#pragma once
// Replaying kopt's built-in search against an exhaustively measured space (search/measured_table.h), without
// a GPU: each "measurement" is a table lookup. Over many seeds it counts how many evaluations the search needs
// before it first measures a configuration within W% of the space's true best, next to uniform random search.
// What is simulated and what is not (docs/history/PERFORMANCE-2026-11-30-to-2026-12-02.md §4, "What the replay simulates"):
//  * policy loop: the real BuiltinGenerator (method selection, allowed values, the parameter strategy),
//    filled per iteration as loop/optimize.cpp fills it (history, champion, plan, seed = seed + iteration).
//    The profile is fixed (ReplayOptions::metrics, by default one on which every declared method's evidence
//    fires) and so is the budget (every axis gets a slot per offered method): the roofline and Nsight Compute
//    stages that set them in the real loop are not run. Verdicts stay empty: a method is ablated only while
//    on in the champion, and the generator keeps such a method on whatever its verdict.
//  * policy free: the parameter strategy alone (propose_configs) over every declared dimension, method guards
//    searched like parameters: what the strategy does when method selection does not pin the guards.
//  * The champion is the fastest configuration measured so far (no noise, no paired re-timing, no 1% effect
//    threshold). The baseline (every dimension at its default) is evaluation 1. A candidate the table does not
//    have counts as an evaluation that failed. Compiler-flag methods are not in the space (the caller builds it
//    with SpaceOptions::offer_flag_methods = false). Ablation builds are counted apart, not as evaluations.
//  * The feasibility model (search/feasibility.h) learns from the table's unwritten_fraction column: the generator
//    leaves out what it predicts infeasible, and a candidate it predicts infeasible after a failure earlier in its
//    batch is built and not measured (ReplayRun::skipped), as the loop does; the batch is measured in the generator's
//    order (the loop's is the order its builds finish in).
//  * The warm start (ReplayOptions::suggested; kopt __search-replay --warm-from takes it from another shape's table
//    with loop/warm_start.h's selection) leads each batch with the points not yet measured, as in the loop; each is an
//    evaluation.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "search/measured_table.h"
#include "search/registry.h"
#include "search/space.h"
#include "search/strategy.h"
#include "util/json_io.h"

namespace kopt::search {

enum class ReplayPolicy { kLoop, kFree };
std::string_view replay_policy_name(ReplayPolicy p);  // "loop", "free"
std::optional<ReplayPolicy> parse_replay_policy(std::string_view s);

struct ReplayOptions {
  int runs = 50;
  int iterations = 25;            // per run, at most
  int branches = 12;              // candidates per iteration (optimize's --branches: 12 for the built-in generator)
  double within_pct = 3;          // the target: within this many percent of the best
  double target_share_pct = 20;   // a run "meets the target" when it gets there in at most this share of the space
  int patience = 0;               // stop after this many iterations without a faster champion; 0: never
  // As the loop (loop/decisions.h StopState::kExplorePatience): this many iterations in a row beyond what the
  // evidence allows (GeneratorOutput::exploring) without a faster champion end the run; 0: never.
  int explore_patience = 2;
  uint64_t first_seed = 1;        // run r uses optimize's --search-seed first_seed + r
  ReplayPolicy policy = ReplayPolicy::kLoop;
  // The space with the compiler-flag methods the live loop offers, each neutral (spread_over_flags): their
  // candidates cost evaluations and change no time. Off: the space without them (the table's own).
  bool flag_methods_neutral = false;
  // As the loop: an ablation variant clearly faster than the champion (by more than 1%) becomes the champion.
  bool promote_ablations = true;
  // As the loop (loop/ablation.cpp plan_param_variants): the new champion's parameters that differ from the
  // baseline's, each reverted alone, are ablation variants too (measured, learnt from, promoted as the methods'
  // are). Off (the default until the replay's figures in docs/PERFORMANCE.md are made again): methods only.
  bool param_ablation = false;
  std::map<std::string, double> metrics;  // the champion's profile in every iteration (policy loop)
  std::string metrics_source = "none";    // how `metrics` was made, for the report
  // The warm start (loop/warm_start.h, computed by the caller from other shapes' tables: kopt __search-replay
  // --warm-from): points to measure first, passed to the generator in every iteration as the loop passes
  // GeneratorInput::warm_start (policy free: StrategyInput::suggested); each batch leads with those not yet measured.
  // They are evaluations like any candidate (the loop measures them). Empty: from scratch.
  std::vector<Suggestion> suggested;
  std::string suggested_source;  // where they came from, for the report ("old.csv at M=4096,N=4096,K=4096")
};

struct ReplayRun {
  uint64_t seed = 0;
  std::optional<int> hit_evaluation;  // 1-based, the baseline being 1; nullopt: never within the target
  std::optional<int> hit_iteration;   // the iteration that measured it (0: the baseline); what a live run's wall follows
  int evaluations = 0;                // evaluations when the run ended
  int iterations = 0;
  int unknown = 0;                    // candidates the table lacks (counted as failed evaluations)
  int ablations = 0;                  // builds the real loop's ablation would measure besides (not counted)
  // Candidates built but not measured: the feasibility model predicted them infeasible after failures earlier in their
  // batch (search/feasibility.h; the table's unwritten_fraction column is its signal). Not counted as evaluations.
  std::vector<Config> skipped;
  double best_found_ms = 0;
  std::string end;                    // "reached", "iterations", "exhausted", "patience"
  std::vector<Config> evaluated;      // in order, the baseline first
  int suggested_evaluated = 0;        // of ReplayOptions::suggested, how many this run measured
  bool hit_suggested = false;         // the hit was one of ReplayOptions::suggested
};

// One point of ReplayOptions::suggested as the table at this shape has it.
struct ReplaySuggested {
  std::string key, reason;
  bool in_table = false;       // false: not in the table (or not a valid point of the space)
  std::optional<double> ms;    // nullopt: failed here, or not in the table
  bool within_target = false;
};

struct ReplaySummary {
  size_t space_size = 0;     // valid configurations of the declared space (table rows + missing)
  size_t measured_ok = 0;
  size_t good = 0;           // configurations within the target
  double best_ms = 0, target_ms = 0, baseline_ms = 0;
  std::string best_key, baseline_key;
  int target_evaluations = 0;        // floor(target_share * space_size)
  double random_mean_evaluations = 0;  // (N + 1) / (m + 1)
  double random_within_target = 0;     // P(random search hits within target_evaluations)
  // Nearest-rank quantiles over all runs of the evaluation count; nullopt: that share of runs never got there.
  std::optional<int> median, p90, max;
  int reached = 0, reached_within_target = 0;
  int reached_first_iteration = 0;  // runs within the target by the end of iteration 1 (the baseline and one batch)
};

struct ReplayResult {
  ReplaySummary summary;
  std::vector<ReplayRun> runs;
  std::vector<std::string> notes;  // e.g. what method selection picked in the first iteration
  std::vector<ReplaySuggested> suggested;  // ReplayOptions::suggested, in order
};

struct ReplayInput {
  const SearchSpace* space = nullptr;  // built without compiler-flag methods
  const Registry* registry = nullptr;
  std::filesystem::path source;        // the kernel (the generator reads it)
  const SpaceTable* table = nullptr;
  ReplayOptions options;
};

Result<ReplayResult> replay_search(const ReplayInput& in);

// A profile on which at least one evidence item of every listed method holds (the first value that satisfies
// an item is kept when two items share a metric).
std::map<std::string, double> metrics_firing(const Registry& reg, const std::vector<std::string>& method_ids);

// Uniform random search without replacement over n configurations of which m are good: the mean number of
// draws to the first good one, and the probability of one within e draws.
double random_mean_draws(size_t n, size_t m);
double random_hit_probability(size_t n, size_t m, int e);

std::string format_replay(const ReplayResult& r, const ReplayOptions& o);
util::Json to_json(const ReplayResult& r, const ReplayOptions& o);

}  // namespace kopt::search
