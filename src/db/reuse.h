#pragma once
// What a new run may take from the results database (issue 39 item 2): pure functions over stored records. The loop
// does not use them yet; Store::find_by_key and Store::nearest_shapes fetch the records and call these.
#include <cstddef>
#include <optional>
#include <vector>

#include "core/dims.h"
#include "db/record.h"

namespace kopt::db {

// The newest stored record measured under exactly `key` (same key_hash and the same canonical key, so a hash
// collision is never a match); nullopt when there is none.
std::optional<Record> find_reusable(const RecordKey& key, const std::vector<Record>& stored);

// How far apart two shapes are: the Euclidean norm of the dims' log ratios, sqrt(sum ln(a_i / b_i)^2), so 2048 is as
// far from 4096 as 4096 from 8192. nullopt when the two do not name the same dims (not comparable).
std::optional<double> shape_distance(const Dims& a, const Dims& b);

struct ShapeNeighbour {
  Record record;
  double distance = 0;  // shape_distance(dims asked for, record's dims)
};
// The k nearest shapes to `dims` among `stored` (same dim names only), nearest first, one record per shape (the
// newest measured there), equal distances newest first.
std::vector<ShapeNeighbour> nearest_shapes(const Dims& dims, const std::vector<Record>& stored, size_t k);

}  // namespace kopt::db
