#include "db/reuse.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kopt::db {

namespace {
// Newer first: a later stamp, then a later row.
bool newer(const Record& a, const Record& b) {
  return a.recorded_unix_s != b.recorded_unix_s ? a.recorded_unix_s > b.recorded_unix_s : a.id > b.id;
}
}  // namespace

std::optional<Record> find_reusable(const RecordKey& key, const std::vector<Record>& stored) {
  const std::string hash = key_hash(key), text = canonical_key(key);
  const Record* best = nullptr;
  for (const auto& r : stored)
    if (key_hash(r.key) == hash && canonical_key(r.key) == text && (!best || newer(r, *best))) best = &r;
  if (!best) return std::nullopt;
  return *best;
}

std::optional<double> shape_distance(const Dims& a, const Dims& b) {
  if (a.size() != b.size()) return std::nullopt;
  double sum = 0;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first || ia->second <= 0 || ib->second <= 0) return std::nullopt;
    const double r = std::log(static_cast<double>(ia->second) / static_cast<double>(ib->second));
    sum += r * r;
  }
  return std::sqrt(sum);
}

std::vector<ShapeNeighbour> nearest_shapes(const Dims& dims, const std::vector<Record>& stored, size_t k) {
  std::map<Dims, const Record*> newest;  // one record per shape
  for (const auto& r : stored) {
    if (!shape_distance(dims, r.key.dims)) continue;
    auto& slot = newest[r.key.dims];
    if (!slot || newer(r, *slot)) slot = &r;
  }
  std::vector<ShapeNeighbour> out;
  for (const auto& [d, r] : newest) out.push_back({*r, *shape_distance(dims, d)});
  std::sort(out.begin(), out.end(), [](const ShapeNeighbour& a, const ShapeNeighbour& b) {
    return a.distance != b.distance ? a.distance < b.distance : newer(a.record, b.record);
  });
  if (out.size() > k) out.resize(k);
  return out;
}

}  // namespace kopt::db
