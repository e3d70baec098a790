#pragma once
// A search space measured exhaustively: one row per configuration with its status and median time, as
// scripts/perf/search_efficiency.sh writes it (measurements.csv). Read as plain text, then mapped onto a
// kernel's SearchSpace so each configuration's time can be looked up by its Config (search/replay.h).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "search/space.h"

namespace kopt::search {

struct MeasuredRow {
  std::vector<int64_t> values;      // one per MeasuredTable::dims, in order
  std::string status;               // "ok", or why not (wrong_result, compile_failed, crashed...)
  std::optional<double> median_ms;  // set when status is ok and a time was recorded
  std::optional<double> unwritten_fraction;  // a failed row's share of an output never written (optional column)
  int line = 0;                     // 1-based line in the file, for errors
};

struct MeasuredTable {
  std::vector<std::string> dims;  // the dimension columns, in file order
  std::vector<MeasuredRow> rows;
};

// The CSV: a header `index,<dim>...,status,median_ms[,ci95_low_ms,ci95_high_ms,tflops,unwritten_fraction]` (the
// columns index, status, median_ms, ci95_low_ms, ci95_high_ms, tflops and unwritten_fraction are known; every other
// column is a dimension; unwritten_fraction, on a failed row, is the share of an output it never wrote),
// then one row per configuration with integer dimension values. Errors name `origin:line`.
Result<MeasuredTable> parse_measured_table(std::string_view csv, const std::string& origin);

// The table over a space: every valid configuration of the space whose flag dimensions are at their default
// is a key; its value is the measured time, or nullopt when it was measured and failed. Configurations the
// table does not have are absent (`missing` counts them).
struct SpaceTable {
  std::map<Config, std::optional<double>> ms;
  std::map<Config, double> unwritten;  // failed configurations that left this share of an output unwritten
  size_t missing = 0;  // valid configurations of the space without a row
  size_t failed() const;
  std::optional<double> best_ms() const;
};

// Every column must be a non-flag dimension of the space and every non-flag dimension a column; every value
// must be one the space declares; no configuration twice; every row valid under the space's constraints.
Result<SpaceTable> map_onto_space(const MeasuredTable& table, const SearchSpace& space, const std::string& origin);

// A table over a space with compiler-flag methods, each made neutral: every key (its flags at their defaults) is
// copied to every combination of the flag dimensions' values, with the same time. What a replay over the live space
// (which offers the flag methods) can assume without their measurements: the space's size, not the flags' effects.
void spread_over_flags(SpaceTable& table, const SearchSpace& space);

}  // namespace kopt::search
