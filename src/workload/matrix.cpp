#include "workload/matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "util/fs.h"
#include "util/strings.h"

namespace kopt::workload {

namespace {

struct OriginRow {
  CaseOrigin o;
  std::string_view name;
};
constexpr std::array<OriginRow, 5> kOrigins = {{{CaseOrigin::kUser, "user"},
                                                 {CaseOrigin::kMatrix, "matrix"},
                                                 {CaseOrigin::kShapesFile, "shapes_file"},
                                                 {CaseOrigin::kHoldoutFile, "holdout_file"},
                                                 {CaseOrigin::kHoldoutDerived, "holdout_derived"}}};
static_assert(kOrigins.size() == static_cast<size_t>(CaseOrigin::kHoldoutDerived) + 1, "one row per origin");

std::string dim_names(const Dims& dims) {
  std::vector<std::string> names;
  for (const auto& [k, v] : dims) names.push_back(k);
  return names.empty() ? std::string("none") : util::join(names, ", ");
}

// Normalises weights to sum 1 (all equal when they sum to zero).
void normalise(std::vector<Case>& cases) {
  double total = 0;
  for (const auto& c : cases) total += c.weight;
  for (auto& c : cases) c.weight = total > 0 ? c.weight / total : 1.0 / static_cast<double>(cases.size());
}

}  // namespace

std::string_view origin_name(CaseOrigin o) { return kOrigins[static_cast<size_t>(o)].name; }

std::optional<CaseOrigin> parse_origin(std::string_view name) {
  for (const auto& r : kOrigins)
    if (r.name == name) return r.o;
  return std::nullopt;
}

std::string_view matrix_mode_name(MatrixMode m) { return m == MatrixMode::kDefault ? "default" : "off"; }

std::optional<MatrixMode> parse_matrix_mode(std::string_view name) {
  if (name == "default") return MatrixMode::kDefault;
  if (name == "off") return MatrixMode::kOff;
  return std::nullopt;
}

std::vector<std::string> scaled_axes(const Dims& dims) {
  std::vector<std::pair<std::string, int64_t>> big;
  for (const auto& [k, v] : dims)
    if (v >= kMinScalableDim) big.emplace_back(k, v);
  // Largest first; std::map order makes ties go to the name first alphabetically (stable sort).
  std::stable_sort(big.begin(), big.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (big.size() > kMaxScaledAxes) big.resize(kMaxScaledAxes);
  std::vector<std::string> out;
  for (const auto& [k, v] : big) out.push_back(k);
  std::sort(out.begin(), out.end());
  return out;
}

int64_t alignment_of(int64_t v) {
  if (v <= 0) return 1;
  int64_t a = v & -v;  // largest power of two dividing v
  a = std::min(a, kMaxAlignment);
  while (a > 1 && a > v / 4) a /= 2;
  return a;
}

int64_t scale_dim(int64_t v, double f) {
  if (f >= 1.0) return v;
  const int64_t a = alignment_of(v);
  const auto units = static_cast<int64_t>(std::floor(static_cast<double>(v) * f / static_cast<double>(a)));
  return std::max<int64_t>(a, units * a);
}

Dims scale_dims(const Dims& dims, const std::vector<std::string>& axes, double f) {
  Dims out = dims;
  for (const auto& k : axes) {
    auto it = out.find(k);
    if (it != out.end()) it->second = scale_dim(it->second, f);
  }
  return out;
}

std::vector<Case> user_case(const Dims& user) {
  Case c;
  c.name = "full";
  c.requested = c.realised = user;
  c.weight = 1;
  c.origin = CaseOrigin::kUser;
  c.note = "the dims given";
  return {c};
}

std::vector<Case> default_matrix(const Dims& user) {
  struct Scale {
    double factor, weight;
    const char* name;
  };
  // The user's own case first: it is the one profiled and placed on the roofline.
  constexpr std::array<Scale, 3> kScales = {{{1.0, 0.5, "full"}, {0.75, 0.3, "scale_0.75"}, {0.5, 0.2, "scale_0.5"}}};
  const auto axes = scaled_axes(user);
  std::vector<Case> out;
  for (const auto& s : kScales) {
    Dims d = scale_dims(user, axes, s.factor);
    auto same = std::find_if(out.begin(), out.end(), [&](const Case& c) { return c.requested == d; });
    if (same != out.end()) {  // merged: the weights add
      same->weight += s.weight;
      continue;
    }
    Case c;
    c.name = s.name;
    c.requested = c.realised = d;
    c.weight = s.weight;
    c.origin = s.factor == 1.0 ? CaseOrigin::kUser : CaseOrigin::kMatrix;
    c.note = s.factor == 1.0 ? std::string("the dims given")
                             : fmt::format("{} x{:g} (rounded down to each one's alignment)", util::join(axes, ", "), s.factor);
    out.push_back(std::move(c));
  }
  if (axes.empty()) out.front().note = fmt::format("the dims given (no dimension >= {} to scale)", kMinScalableDim);
  normalise(out);
  return out;
}

std::vector<Case> matrix_cases(MatrixMode mode, const Dims& user) {
  return mode == MatrixMode::kDefault ? default_matrix(user) : user_case(user);
}

Result<std::vector<Case>> parse_shapes(const std::string& text, const std::string& filename, const Dims& user,
                                       CaseOrigin origin) {
  std::vector<Case> out;
  const auto lines = util::split_lines(text);
  for (size_t li = 0; li < lines.size(); ++li) {
    const int line_no = static_cast<int>(li) + 1;
    auto err = [&](const std::string& what) { return input_error(fmt::format("{}:{}: {}", filename, line_no, what)); };
    std::string line = lines[li];
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line = util::trim(line);
    if (line.empty()) continue;
    std::vector<std::string> tokens;
    for (auto& t : util::split(line, ' '))
      for (auto& u : util::split(t, '\t')) tokens.push_back(u);
    Case c;
    c.origin = origin;
    c.line = line_no;
    c.name = "line" + std::to_string(line_no);
    bool has_weight = false;
    const bool weight_is_dim = user.count("weight") > 0;
    for (const auto& tok : tokens) {
      auto eq = tok.find('=');
      if (eq == std::string::npos || eq == 0)
        return err(fmt::format("'{}' is not NAME=VALUE; write each dimension as NAME=VALUE (e.g. {}), optionally "
                               "weight=W",
                               tok, user.empty() ? std::string("M=1024") : user.begin()->first + "=" + std::to_string(user.begin()->second)));
      std::string name = tok.substr(0, eq), value = tok.substr(eq + 1);
      if (name == "weight" && !weight_is_dim) {
        if (has_weight) return err("weight is given twice; keep one weight=W");
        double w = 0;
        auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), w);
        if (value.empty() || ec != std::errc() || p != value.data() + value.size() || !std::isfinite(w) || w <= 0)
          return err(fmt::format("weight '{}' is not a positive number; write weight=0.5 (weights are normalised to sum 1)", value));
        c.weight = w;
        has_weight = true;
        continue;
      }
      if (!user.count(name))
        return err(fmt::format("unknown dimension '{}' (the kernel's dimensions are {}); name only those", name, dim_names(user)));
      if (c.requested.count(name)) return err(fmt::format("dimension {} is given twice; give it once", name));
      int64_t v = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (value.empty() || ec != std::errc() || p != value.data() + value.size()) {
        if (ec == std::errc::result_out_of_range) return err(fmt::format("{}={} is too large for a 64-bit integer", name, value));
        return err(fmt::format("{}='{}' is not an integer; write {}={} (a positive whole number)", name, value, name, user.at(name)));
      }
      if (v <= 0) return err(fmt::format("{}={} is not positive; dimensions are positive integers", name, value));
      c.requested[name] = v;
    }
    std::vector<std::string> missing;
    for (const auto& [k, v] : user)
      if (!c.requested.count(k)) missing.push_back(k);
    if (!missing.empty())
      return err(fmt::format("missing {} {}; every case names all of the kernel's dimensions ({})",
                             missing.size() == 1 ? "dimension" : "dimensions", util::join(missing, ", "), dim_names(user)));
    for (const auto& prev : out)
      if (prev.requested == c.requested)
        return err(fmt::format("the same case as line {} ({}); remove one (give it a larger weight instead)", prev.line,
                               format_dims(c.requested)));
    c.realised = c.requested;
    c.note = "from " + filename + ":" + std::to_string(line_no);
    out.push_back(std::move(c));
  }
  if (out.empty())
    return input_error(fmt::format("{}: no cases; write one line per case such as '{}' (# starts a comment)", filename,
                                   format_dims(user)));
  if (out.size() > kMaxShapesFileCases)
    return input_error(fmt::format("{}: {} cases; at most {} (each case is checked and timed for every candidate)", filename,
                                   out.size(), kMaxShapesFileCases));
  normalise(out);
  return out;
}

Result<std::vector<Case>> read_shapes_file(const std::filesystem::path& path, const Dims& user, CaseOrigin origin) {
  auto text = util::read_file(path);
  if (!text) return input_error("shapes file " + path.string() + " cannot be read: " + text.error().message);
  return parse_shapes(*text, path.string(), user, origin);
}

Result<std::vector<Case>> search_cases(MatrixMode mode, const std::optional<std::filesystem::path>& shapes_file,
                                       const Dims& user) {
  if (shapes_file) return read_shapes_file(*shapes_file, user, CaseOrigin::kShapesFile);
  return matrix_cases(mode, user);
}

util::Json to_json(const Case& c) {
  return {{"name", c.name},         {"requested", c.requested},          {"realised", c.realised},
          {"weight", c.weight},     {"origin", origin_name(c.origin)},   {"line", c.line},
          {"note", c.note},         {"fitted", c.fitted()}};
}

util::Json to_json(const std::vector<Case>& cases) {
  util::Json a = util::Json::array();
  for (const auto& c : cases) a.push_back(to_json(c));
  return a;
}

Result<Case> case_from_json(const util::Json& j) {
  Case c;
  try {
    c.name = j.at("name").get<std::string>();
    c.requested = j.at("requested").get<Dims>();
    c.realised = j.value("realised", c.requested);
    c.weight = j.value("weight", 1.0);
    auto o = parse_origin(j.value("origin", std::string("user")));
    if (!o) return input_error("case " + c.name + ": unknown origin " + j.value("origin", std::string()));
    c.origin = *o;
    c.line = j.value("line", 0);
    c.note = j.value("note", std::string());
  } catch (const std::exception& e) {
    return input_error(std::string("a workload case is malformed: ") + e.what());
  }
  return c;
}

Result<std::vector<Case>> cases_from_json(const util::Json& j) {
  if (!j.is_array()) return input_error("workload cases: expected an array");
  std::vector<Case> out;
  for (const auto& e : j) {
    KOPT_TRY_ASSIGN(auto c, case_from_json(e));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace kopt::workload
