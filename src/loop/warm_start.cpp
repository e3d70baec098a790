#include "loop/warm_start.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "db/reuse.h"

namespace kopt::loop {

namespace {

bool newer(const db::Record& a, const db::Record& b) {
  return a.recorded_unix_s != b.recorded_unix_s ? a.recorded_unix_s > b.recorded_unix_s : a.id > b.id;
}

std::string ordinal(int n) {
  const int t = n % 100;
  const char* suffix = (t >= 11 && t <= 13) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  return fmt::format("{}{}", n, suffix);
}

std::optional<int> index_of(const search::Dim& d, int64_t v) {
  for (size_t i = 0; i < d.values.size(); ++i)
    if (d.values[i] == v) return static_cast<int>(i);
  return std::nullopt;
}

}  // namespace

std::string dims_text(const Dims& d) {
  std::string s;
  for (const auto& [k, v] : d) s += fmt::format("{}{}={}", s.empty() ? "" : ",", k, v);
  return s;
}

std::string WarmStartPoint::reason() const {
  return fmt::format("warm start: {} fastest at {} (distance {:.2f}), {:.4g} ms there (record {}){}", ordinal(rank),
                     dims_text(from_dims), distance, median_ms, record_id, scaled.empty() ? "" : "; scaled: " + scaled);
}

util::Json to_json(const WarmStartPoint& p) {
  // clang-format off
  return {{"config", p.config}, {"key", p.key}, {"from_dims", p.from_dims}, {"distance", p.distance}, {"rank", p.rank},
          {"median_ms", p.median_ms}, {"record_id", p.record_id}, {"run_dir", p.run_dir}, {"recorded_at", p.recorded_at},
          {"candidate_id", p.candidate_id}, {"scaled", p.scaled}, {"reason", p.reason()}};
  // clang-format on
}

std::optional<WarmStartPoint> warm_start_point_from_json(const util::Json& j) {
  if (!j.is_object() || !j.contains("config") || !j["config"].is_array()) return std::nullopt;
  try {
    WarmStartPoint p;
    p.config = j["config"].get<search::Config>();
    p.key = j.value("key", std::string());
    p.from_dims = j.value("from_dims", Dims{});
    p.distance = j.value("distance", 0.0);
    p.rank = j.value("rank", 0);
    p.median_ms = j.value("median_ms", 0.0);
    p.record_id = j.value("record_id", int64_t{0});
    p.run_dir = j.value("run_dir", std::string());
    p.recorded_at = j.value("recorded_at", std::string());
    p.candidate_id = j.value("candidate_id", std::string());
    p.scaled = j.value("scaled", std::string());
    return p;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

namespace {

// The ratio of `to` over `from` on the names a param follows (1 where none is a dim of both).
double follows_ratio(const search::Dim& d, const Dims* from, const Dims* to) {
  double r = 1;
  if (!from || !to) return r;
  for (const auto& name : d.follows) {
    auto a = from->find(name), b = to->find(name);
    if (a != from->end() && b != to->end() && a->second > 0 && b->second > 0) r *= static_cast<double>(b->second) / a->second;
  }
  return r;
}

// The nonzero value of `d` nearest `target` in log scale (the smaller on a tie).
int64_t nearest_value(const search::Dim& d, double target) {
  int64_t best = 0;
  double gap = 0;
  for (int64_t v : d.values) {
    if (v <= 0) continue;
    double g = std::abs(std::log2(static_cast<double>(v)) - std::log2(target));
    if (best == 0 || g < gap - 1e-9) best = v, gap = g;
  }
  return best;
}

}  // namespace

std::optional<search::Config> config_in_space(const util::Json& config, const search::SearchSpace& space,
                                              const search::Registry* reg, const Dims* from, const Dims* to,
                                              std::string* scaled) {
  if (!config.is_object() || config.contains("source_hash")) return std::nullopt;
  const util::Json params = config.value("params", util::Json::object());
  const util::Json guards = config.value("guards", util::Json::object());
  if (!params.is_object() || !guards.is_object()) return std::nullopt;
  search::Config c(space.dims.size(), 0);
  for (size_t i = 0; i < space.dims.size(); ++i) {
    const search::Dim& d = space.dims[i];
    std::optional<int> idx;
    if (d.kind == search::DimKind::kParam) {
      if (!params.contains(d.name) || !params[d.name].is_number_integer()) return std::nullopt;
      int64_t v = params[d.name].get<int64_t>();
      if (double r = follows_ratio(d, from, to); v > 0 && std::abs(r - 1) > 1e-9) {
        int64_t moved = nearest_value(d, static_cast<double>(v) * r);
        if (moved > 0 && moved != v && scaled)
          *scaled += fmt::format("{}{} {} -> {}", scaled->empty() ? "" : ", ", d.name, v, moved);
        if (moved > 0) v = moved;
      }
      idx = index_of(d, v);
    } else {
      const bool on = guards.contains(d.method) && guards[d.method].is_boolean() && guards[d.method].get<bool>();
      if (!on) {
        idx = index_of(d, 0);
      } else if (d.kind == search::DimKind::kGuard || d.values.size() <= 2) {
        for (size_t v = 0; v < d.values.size() && !idx; ++v)
          if (d.values[v] != 0) idx = static_cast<int>(v);
      } else if (const search::Method* m = reg ? reg->find(d.method) : nullptr; m && m->flag_param) {
        const std::string& name = m->flag_param->name;
        if (params.contains(name) && params[name].is_number_integer()) idx = index_of(d, params[name].get<int64_t>());
      }
    }
    if (!idx) return std::nullopt;
    c[i] = *idx;
  }
  if (!space.valid(c)) return std::nullopt;
  return c;
}

std::vector<WarmStartPoint> warm_start_points(const std::vector<db::Record>& records, const WarmStartContext& ctx,
                                              const search::SearchSpace& space, const search::Registry* reg,
                                              const WarmStartOptions& o) {
  std::vector<db::Record> usable;
  for (const auto& r : records) {
    if (r.key.kernel_hash != ctx.kernel_hash || r.key.gpu_model != ctx.gpu_model || r.key.dtypes != ctx.dtypes) continue;
    if (r.verdict != db::Verdict::kCorrect || !r.median_ms || !(*r.median_ms > 0)) continue;
    auto dist = db::shape_distance(ctx.dims, r.key.dims);
    if (!dist || *dist <= 0) continue;  // another set of dims, or this very shape (reuse's business)
    usable.push_back(r);
  }
  std::vector<WarmStartPoint> out;
  std::set<search::Config> taken;
  for (const auto& shape : db::nearest_shapes(ctx.dims, usable, o.shapes)) {
    // Per configuration at this shape, its newest record.
    std::map<std::string, const db::Record*> newest;
    for (const auto& r : usable) {
      if (r.key.dims != shape.record.key.dims) continue;
      auto& slot = newest[r.key.config.dump()];
      if (!slot || newer(r, *slot)) slot = &r;
    }
    std::vector<const db::Record*> ranked;
    for (const auto& [k, r] : newest) ranked.push_back(r);
    std::sort(ranked.begin(), ranked.end(), [](const db::Record* a, const db::Record* b) {
      return *a->median_ms != *b->median_ms ? *a->median_ms < *b->median_ms : a->id < b->id;
    });
    size_t here = 0;
    int rank = 0;
    for (const db::Record* r : ranked) {
      if (here >= o.per_shape) break;
      ++rank;
      std::string scaled;
      auto c = config_in_space(r->key.config, space, reg, &r->key.dims, &ctx.dims, &scaled);
      if (!c || !taken.insert(*c).second) continue;
      WarmStartPoint p;
      p.scaled = scaled;
      p.config = *c;
      p.key = space.key(*c);
      p.from_dims = r->key.dims;
      p.distance = shape.distance;
      p.rank = rank;
      p.median_ms = *r->median_ms;
      p.record_id = r->id;
      p.run_dir = r->run_dir;
      p.recorded_at = r->recorded_at;
      out.push_back(std::move(p));
      ++here;
    }
  }
  return out;
}

std::vector<search::Suggestion> suggestions(const std::vector<WarmStartPoint>& points) {
  std::vector<search::Suggestion> out;
  for (const auto& p : points) out.push_back({p.config, p.reason()});
  return out;
}

}  // namespace kopt::loop
