#include "cli/replay_warm_start.h"

#include <fmt/format.h>

#include "cli/dims.h"
#include "db/reuse.h"
#include "search/method.h"

namespace kopt::cli {

Result<Dims> parse_dims_list(std::string_view text, std::string_view option) {
  std::vector<std::string> args;
  std::string part;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ',' || text[i] == ' ') {
      if (!part.empty()) args.push_back("--" + part);
      part.clear();
    } else {
      part += text[i];
    }
  }
  if (args.empty())
    return input_error(fmt::format("{} needs dimensions NAME=VALUE separated by commas (e.g. {} M=4096,N=4096,K=4096)",
                                   option, option));
  auto dims = parse_dims(args);
  if (!dims) return input_error(fmt::format("{} '{}': {}", option, text, dims.error().message));
  return dims;
}

std::vector<db::Record> records_from_table(const search::MeasuredTable& table, const Dims& dims,
                                           const search::SearchSpace& space, int64_t recorded_unix_s) {
  std::vector<db::Record> out;
  for (const auto& row : table.rows) {
    if (row.status != "ok" || !row.median_ms) continue;
    util::Json params = util::Json::object(), guards = util::Json::object();
    for (size_t i = 0; i < table.dims.size() && i < row.values.size(); ++i) {
      const std::string& col = table.dims[i];
      const int d = space.dim_index(col);
      if (d >= 0 && space.dims[static_cast<size_t>(d)].kind != search::DimKind::kParam) {
        guards[space.dims[static_cast<size_t>(d)].method] = row.values[i] != 0;
      } else if (auto method = d < 0 ? search::guard_method(col) : std::nullopt) {
        guards[*method] = row.values[i] != 0;
      } else {
        params[col] = row.values[i];
      }
    }
    db::Record r;
    r.id = row.line;
    r.recorded_unix_s = recorded_unix_s;
    r.key.kernel_hash = "replay";
    r.key.gpu_model = "table";
    r.key.dims = dims;
    r.key.config = {{"params", params}, {"guards", guards}};
    r.verdict = db::Verdict::kCorrect;
    r.run_status = row.status;
    r.median_ms = row.median_ms;
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<loop::WarmStartPoint>> replay_warm_start(const std::vector<WarmFromTable>& from, const Dims& dims,
                                                            const search::SearchSpace& space,
                                                            const search::Registry& reg) {
  std::vector<db::Record> records;
  for (const auto& f : from) {
    auto distance = db::shape_distance(dims, f.dims);
    if (!distance)
      return input_error(fmt::format("--warm-from {}: its --warm-from-dims {} do not name the same dimensions as --dims {}",
                                     f.path, loop::dims_text(f.dims), loop::dims_text(dims)));
    if (*distance <= 0)
      return input_error(fmt::format("--warm-from {}: its --warm-from-dims {} are --dims: the warm start takes other shapes "
                                     "(give the dims that table was measured at)",
                                     f.path, loop::dims_text(f.dims)));
    auto rs = records_from_table(f.table, f.dims, space, static_cast<int64_t>(&f - from.data()) + 1);
    if (rs.empty()) return input_error(fmt::format("--warm-from {}: no row measured ok", f.path));
    records.insert(records.end(), rs.begin(), rs.end());
  }
  loop::WarmStartContext ctx{"replay", dims, {}, "table"};
  return loop::warm_start_points(records, ctx, space, &reg);
}

}  // namespace kopt::cli
