#pragma once
// The warm start of `kopt __search-replay --warm-from` (docs/DATABASE.md "Warm start", "Measured by replay"): another
// shape's measured table read as the results database's records of that shape, and the real warm start's selection
// (loop/warm_start.h) run on them, so that the replay at the new shape measures first what a live run would.
#include <string>
#include <string_view>
#include <vector>

#include "core/dims.h"
#include "core/result.h"
#include "db/record.h"
#include "loop/warm_start.h"
#include "search/measured_table.h"
#include "search/space.h"

namespace kopt::cli {

// "M=4096,N=4096,K=4096" (commas or spaces between; each NAME=VALUE as --dim takes it). `option` names the option in
// the errors.
Result<Dims> parse_dims_list(std::string_view text, std::string_view option);

// The ok rows of `table` as records measured at `dims`: correct, with the row's median; the configuration as the loop
// stores it ({"params": {...}, "guards": {method: on}}): a column that is a guard dimension of `space` (KOPT_<ID>),
// or any other KOPT_<ID> column, is method <id>'s guard (on: non-zero); every other column a param. Kernel hash, GPU
// model and dtypes are "replay" / "table" / none (one kernel, one GPU). A record's id is its row's line in the file
// (the warm start's reason says "record N": line N); all are stamped `recorded_unix_s` (the newer table wins a tie of
// distances, as in the database).
std::vector<db::Record> records_from_table(const search::MeasuredTable& table, const Dims& dims,
                                           const search::SearchSpace& space, int64_t recorded_unix_s);

struct WarmFromTable {
  std::string path;
  Dims dims;
  search::MeasuredTable table;
};

// The warm start's points for a run at `dims`: loop::warm_start_points over every table's records (its defaults: the
// two nearest shapes, three configurations each; a configuration that does not map into `space` is passed over).
// Input errors: a table at `dims` itself, or naming other dimensions than `dims`.
Result<std::vector<loop::WarmStartPoint>> replay_warm_start(const std::vector<WarmFromTable>& from, const Dims& dims,
                                                            const search::SearchSpace& space,
                                                            const search::Registry& reg);

}  // namespace kopt::cli
