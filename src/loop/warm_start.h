#pragma once
// The warm start (issue 39 item 2(b), docs/DATABASE.md "Warm start"): a run at new dims leads its first design with
// the best configurations the results database holds of the same kernel at the nearest other shapes, on the same GPU
// model. Pure: records in, points of this run's space out. Every point is measured in this run like any candidate;
// nothing measured at another shape stands for anything here.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dims.h"
#include "db/record.h"
#include "search/registry.h"
#include "search/space.h"
#include "search/strategy.h"
#include "util/json_io.h"

namespace kopt::loop {

struct WarmStartOptions {
  size_t shapes = 2;     // the nearest shapes taken
  size_t per_shape = 3;  // the best configurations taken at each, by median, among those legal in this run's space
};

// What this run is: the records a warm start may use have its kernel hash, GPU model and dtypes, and other dims.
struct WarmStartContext {
  std::string kernel_hash;
  Dims dims;
  std::vector<std::string> dtypes;
  std::string gpu_model;
};

struct WarmStartPoint {
  search::Config config;      // in this run's space
  std::string key;            // SearchSpace::key of it ("TILE=64,UNROLL=2,KOPT_VECTORIZED_ACCESS=1")
  Dims from_dims;             // the shape it was measured at
  double distance = 0;        // db::shape_distance(this run's dims, from_dims)
  int rank = 0;               // 1: the fastest there
  double median_ms = 0;       // its median there
  int64_t record_id = 0;
  std::string run_dir, recorded_at;
  std::string candidate_id;   // the candidate it became in this run (set when proposed; empty until then)
  std::string scaled;         // the values scaled to this run's dims ("block_size_VALUE 128 -> 256"; empty: none)
  // "warm start: 1st at M=2048,N=2048 (distance 0.69), 1.234 ms there (record 12)": the proposal's reason.
  std::string reason() const;
};
util::Json to_json(const WarmStartPoint& p);
std::optional<WarmStartPoint> warm_start_point_from_json(const util::Json& j);

// The point of `space` a stored configuration ({"params": {NAME: value}, "guards": {method: on}}, db's config_json)
// names: each param's value must be one of its dimension's values; a guard or flag method absent from the record is
// off; a valued flag's value is its registry flag_param's (`reg`; without it a valued flag that is on is not mapped).
// nullopt: a param missing or with a value this space does not have, a generator's candidate ("source_hash": its
// params do not say what it is), or a point that breaks a constraint of this space.
// With `from` (the dims it was measured at) and `to` (this run's): a param that follows dims (`follows=`, a block
// size its launcher computes from them) and has a nonzero value is scaled by the product of their ratios to/from, to
// the value of its set nearest in log scale (a block of 128 at d = 4096 is 256 at d = 8192: the work per thread is
// what carries over); `scaled` (when given) says what moved.
std::optional<search::Config> config_in_space(const util::Json& config, const search::SearchSpace& space,
                                              const search::Registry* reg = nullptr, const Dims* from = nullptr,
                                              const Dims* to = nullptr, std::string* scaled = nullptr);

// The warm start: among `records` (one kernel's, Store::kernel_records), those measured correct with a median, of this
// kernel, GPU model and dtypes, at other dims naming the same dimensions; their shapes ranked by db::shape_distance
// (the Euclidean norm of the dims' log ratios), nearest first, equal distances newest first; at each of the
// `o.shapes` nearest, its configurations ranked by median (a configuration measured more than once there: its newest
// record), fastest first, mapped into `space` (config_in_space; those that do not map are passed over), the first
// `o.per_shape` taken. A configuration taken at a nearer shape is not taken again. Nearest shape first, fastest first.
std::vector<WarmStartPoint> warm_start_points(const std::vector<db::Record>& records, const WarmStartContext& ctx,
                                              const search::SearchSpace& space, const search::Registry* reg = nullptr,
                                              const WarmStartOptions& o = {});

// The points as the strategy's suggestions (search::StrategyInput::suggested), in order: it skips those measured.
std::vector<search::Suggestion> suggestions(const std::vector<WarmStartPoint>& points);

// "M=2048,N=2048,K=2048".
std::string dims_text(const Dims& d);

}  // namespace kopt::loop
