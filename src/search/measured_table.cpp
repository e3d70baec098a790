#include "search/measured_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>

#include "util/strings.h"

namespace kopt::search {

namespace {

const std::set<std::string, std::less<>> kKnownColumns = {"index",        "status", "median_ms",         "ci95_low_ms",
                                                          "ci95_high_ms", "tflops", "unwritten_fraction"};

std::optional<int64_t> parse_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0') return std::nullopt;
  return v;
}

std::optional<double> parse_double(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

Result<MeasuredTable> parse_measured_table(std::string_view csv, const std::string& origin) {
  auto lines = util::split_lines(csv);
  size_t first = 0;
  while (first < lines.size() && util::trim(lines[first]).empty()) ++first;
  if (first == lines.size()) return input_error(origin + ": empty (expected a header line)");
  auto header = util::split(util::trim(lines[first]), ',', false);
  for (auto& h : header) h = util::trim(h);
  int status_col = -1, ms_col = -1, unwritten_col = -1;
  std::vector<int> dim_cols;
  MeasuredTable t;
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& h = header[i];
    if (h == "status") status_col = static_cast<int>(i);
    else if (h == "median_ms") ms_col = static_cast<int>(i);
    else if (h == "unwritten_fraction")
      unwritten_col = static_cast<int>(i);
    else if (!kKnownColumns.count(h)) {
      if (!util::is_identifier(h)) return input_error(fmt::format("{}:{}: column '{}' is not a dimension name", origin, first + 1, h));
      if (std::count(t.dims.begin(), t.dims.end(), h)) return input_error(fmt::format("{}:{}: column '{}' twice", origin, first + 1, h));
      t.dims.push_back(h);
      dim_cols.push_back(static_cast<int>(i));
    }
  }
  if (status_col < 0 || ms_col < 0) return input_error(origin + ": the header needs the columns status and median_ms");
  if (t.dims.empty()) return input_error(origin + ": the header names no dimension column");
  for (size_t l = first + 1; l < lines.size(); ++l) {
    std::string text = util::trim(lines[l]);
    if (text.empty()) continue;
    auto cells = util::split(text, ',', false);
    if (cells.size() != header.size())
      return input_error(fmt::format("{}:{}: {} cells, the header has {}", origin, l + 1, cells.size(), header.size()));
    for (auto& c : cells) c = util::trim(c);
    MeasuredRow row;
    row.line = static_cast<int>(l + 1);
    for (size_t d = 0; d < dim_cols.size(); ++d) {
      auto v = parse_int(cells[static_cast<size_t>(dim_cols[d])]);
      if (!v) return input_error(fmt::format("{}:{}: {} = '{}' is not an integer", origin, l + 1, t.dims[d], cells[static_cast<size_t>(dim_cols[d])]));
      row.values.push_back(*v);
    }
    row.status = cells[static_cast<size_t>(status_col)];
    if (row.status.empty()) return input_error(fmt::format("{}:{}: empty status", origin, l + 1));
    const std::string& ms = cells[static_cast<size_t>(ms_col)];
    if (row.status == "ok") {
      row.median_ms = parse_double(ms);
      if (!row.median_ms || *row.median_ms <= 0)
        return input_error(fmt::format("{}:{}: status ok but median_ms '{}' is not a positive number", origin, l + 1, ms));
    }
    if (unwritten_col >= 0 && !cells[static_cast<size_t>(unwritten_col)].empty()) {
      const std::string& u = cells[static_cast<size_t>(unwritten_col)];
      row.unwritten_fraction = parse_double(u);
      if (row.status == "ok" || !row.unwritten_fraction || *row.unwritten_fraction <= 0 || *row.unwritten_fraction > 1)
        return input_error(
            fmt::format("{}:{}: unwritten_fraction '{}' must be in (0, 1] and only on a failed row", origin, l + 1, u));
    }
    t.rows.push_back(std::move(row));
  }
  if (t.rows.empty()) return input_error(origin + ": no rows after the header");
  return t;
}

size_t SpaceTable::failed() const {
  return static_cast<size_t>(std::count_if(ms.begin(), ms.end(), [](const auto& kv) { return !kv.second; }));
}

std::optional<double> SpaceTable::best_ms() const {
  std::optional<double> best;
  for (const auto& [c, v] : ms)
    if (v && (!best || *v < *best)) best = v;
  return best;
}

Result<SpaceTable> map_onto_space(const MeasuredTable& table, const SearchSpace& space, const std::string& origin) {
  std::vector<int> col_dim;
  for (const auto& name : table.dims) {
    int d = space.dim_index(name);
    if (d < 0 || space.dims[static_cast<size_t>(d)].kind == DimKind::kFlag)
      return input_error(fmt::format("{}: column '{}' is not a declared dimension of {}", origin, name, space.source_file));
    col_dim.push_back(d);
  }
  for (const auto& dim : space.dims)
    if (dim.kind != DimKind::kFlag && !std::count(table.dims.begin(), table.dims.end(), dim.name))
      return input_error(fmt::format("{}: no column for the dimension '{}' of {}", origin, dim.name, space.source_file));
  SpaceTable out;
  for (const auto& row : table.rows) {
    Config c = space.default_config();
    for (size_t i = 0; i < col_dim.size(); ++i) {
      const Dim& dim = space.dims[static_cast<size_t>(col_dim[i])];
      auto it = std::find(dim.values.begin(), dim.values.end(), row.values[i]);
      if (it == dim.values.end())
        return input_error(fmt::format("{}:{}: {} = {} is not one of the values the kernel declares", origin, row.line, dim.name, row.values[i]));
      c[static_cast<size_t>(col_dim[i])] = static_cast<int>(it - dim.values.begin());
    }
    if (!space.valid(c)) return input_error(fmt::format("{}:{}: {} breaks a constraint of the space", origin, row.line, space.key(c)));
    if (!out.ms.emplace(c, row.median_ms).second)
      return input_error(fmt::format("{}:{}: {} appears twice", origin, row.line, space.key(c)));
    if (row.unwritten_fraction) out.unwritten[c] = *row.unwritten_fraction;
  }
  // Count the valid declared configurations the table lacks (flags at their default).
  Config c = space.default_config();
  std::function<void(size_t)> walk = [&](size_t d) {
    if (d == space.dims.size()) {
      if (space.valid(c) && !out.ms.count(c)) ++out.missing;
      return;
    }
    if (space.dims[d].kind == DimKind::kFlag) return walk(d + 1);
    for (size_t i = 0; i < space.dims[d].values.size(); ++i) {
      c[d] = static_cast<int>(i);
      walk(d + 1);
    }
    c[d] = space.dims[d].default_index;
  };
  double declared = 1;
  for (const auto& d : space.dims)
    if (d.kind != DimKind::kFlag) declared *= static_cast<double>(d.values.size());
  if (declared <= 1e7) walk(0);
  return out;
}

void spread_over_flags(SpaceTable& table, const SearchSpace& space) {
  std::vector<size_t> flags;
  for (size_t d = 0; d < space.dims.size(); ++d)
    if (space.dims[d].kind == DimKind::kFlag) flags.push_back(d);
  if (flags.empty()) return;
  const auto base = table.ms;
  const auto base_unwritten = table.unwritten;
  for (const auto& [config, ms] : base) {
    // Every combination of the flag dimensions' values (an odometer over their indices).
    std::vector<int> idx(flags.size(), 0);
    for (;;) {
      size_t k = 0;
      while (k < flags.size() && ++idx[k] == static_cast<int>(space.dims[flags[k]].values.size())) idx[k++] = 0;
      if (k == flags.size()) break;
      Config c = config;
      for (size_t f = 0; f < flags.size(); ++f) c[flags[f]] = idx[f];
      table.ms.emplace(c, ms);
      if (auto u = base_unwritten.find(config); u != base_unwritten.end()) table.unwritten.emplace(c, u->second);
    }
  }
}

}  // namespace kopt::search
