#pragma once
// The per-shape dispatch (issue 39 item 3; docs/GATES.md "The per-shape dispatch"): which configuration serves which
// case of the workload matrix, and the rule that picks one at any dims at run time, as pure functions. The loop
// (per_shape_loop.cpp) measures what they take; the dispatcher's C source (dispatcher_source) implements the same rule.
//
// Selection: each contender was raced against the final champion at every case (paired: the median of the per-round
// time ratios contender/champion with its 95% CI). At a case, the champion keeps its place unless a contender is faster
// beyond the noise there (its CI entirely below 1 - min_effect: runner::Verdict::kFaster); among those, the fastest
// (smallest median ratio), but a contender already chosen at another case wins over it when their CIs overlap (a
// difference inside the noise adds no configuration). Cases are ordered along the dims that differ between them, and
// adjacent cases with the same configuration form one bucket.
//
// The bucket rule at run time, defined for any dims: the nearest case in log space of the varying dims (the squared
// distance of ln max(v, 1) summed over them; a dim absent counts as 1), ties to the larger case (the larger sum of
// logs, then the later case).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "contract/signature.h"
#include "runner/stats.h"
#include "util/json_io.h"

namespace kopt::loop {

using DimValues = std::map<std::string, int64_t>;

struct DispatchCase {
  std::string name;
  double weight = 1;
  DimValues point;  // the values solve()'s scalar parameters take at the case (its realised dims)
};

struct DispatchContender {
  std::string id;
  // Per case (DispatchCase order): time(contender) / time(champion), paired; nullopt: not measured there (never chosen).
  std::vector<std::optional<runner::PairedComparison>> vs_champion;
};

struct DispatchBucket {
  std::string config;              // a contender's id, or the champion's
  std::vector<std::string> cases;  // adjacent along the varying dims
};

struct DispatchPlan {
  std::vector<std::string> keys;     // the dims that differ between the cases: what the rule reads
  std::vector<std::string> chosen;   // per case: the configuration serving it
  std::vector<std::string> configs;  // distinct, the champion first when it serves a case, then in case order
  std::vector<DispatchBucket> buckets;
  std::vector<std::string> why;  // per case: why this configuration ("faster beyond the noise: ...")
  bool worthwhile = false;       // more than one configuration serves the cases
  std::string reason;            // why there is no dispatch, when not worthwhile
};

DispatchPlan plan_dispatch(const std::vector<DispatchCase>& cases, const std::string& champion,
                           const std::vector<DispatchContender>& contenders, double min_effect = runner::kMinEffect);

// The dims that differ between the cases, sorted by name.
std::vector<std::string> varying_keys(const std::vector<DispatchCase>& cases);

// The bucket rule: the index of the case whose configuration serves `dims`. Cases must not be empty.
size_t nearest_case(const std::vector<DispatchCase>& cases, const std::vector<std::string>& keys, const DimValues& dims);

// The dispatcher's CUDA source: `extern "C" void solve(...)` with the signature's parameters, which computes the rule
// over the scalar parameters named by `keys` and forwards to the solve() of `libraries[config index]` (file names beside
// the dispatcher's own library, each opened with dlopen RTLD_LOCAL when the dispatcher is loaded: configurations of one
// source never clash on kernel or host symbol names). Also exports `int kopt_dispatch_case(const long long* values)`
// (values in `keys` order: the rule alone) and `const char* kopt_dispatch_load_error()` ("" when every configuration
// loaded), for tests. `case_config[i]`: the index into `libraries` serving case i.
std::string dispatcher_source(const contract::KernelSignature& sig, const std::vector<DispatchCase>& cases,
                              const std::vector<std::string>& keys, const std::vector<size_t>& case_config,
                              const std::vector<std::string>& libraries);

util::Json to_json(const DispatchPlan& p, const std::vector<DispatchCase>& cases);

}  // namespace kopt::loop
