#include "search/feasibility.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/strings.h"

namespace kopt::search {

namespace {

constexpr size_t kMaxProductDims = 6;     // 3^6 - 1 exponent vectors at most
const double kAgreeLog = std::log(1.15);  // two failures' coverages agree with a model within 15%
constexpr double kEps = 1e-9;

}  // namespace

std::string_view infeasible_basis_name(InfeasibleBasis b) { return b == InfeasibleBasis::kDominated ? "dominated" : "product"; }

std::string InfeasiblePrediction::reason(const SearchSpace& s) const {
  const std::string from = fmt::format("{} left {:.4g}% of an output unwritten", s.key(because_of), 100 * because_unwritten);
  if (basis == InfeasibleBasis::kDominated)
    return "predicted infeasible (under-coverage): no size parameter larger than at " + from;
  return fmt::format(
      "predicted infeasible (under-coverage): the product model gives it at most {:.3g}% of the coverage it needs "
      "({})",
      100 * predicted_coverage, from);
}

FeasibilityModel::FeasibilityModel(const SearchSpace& space, const std::vector<FeasibilityObservation>& obs) : space_(&space) {
  // Classes are made by the under-coverage failures; correct points only test them.
  for (const auto& o : obs) {
    if (o.ok || !o.unwritten_fraction || !space.in_range(o.config)) continue;
    const double f = *o.unwritten_fraction;
    if (!(f > 0 && f < 1)) continue;  // nothing written at all: the kernel may not have run (a launch that failed)
    std::vector<size_t> dims;
    auto key = class_key(o.config, &dims);
    if (!key) continue;
    auto it = std::find_if(classes_.begin(), classes_.end(), [&](const Class& k) { return k.key == *key; });
    if (it == classes_.end()) {
      classes_.push_back({*key, dims, {}, {}, true, {}});
      it = classes_.end() - 1;
    }
    it->failures.push_back({o.config, log_sizes(o.config, it->size_dims), 1 - f});
  }
  for (const auto& o : obs) {
    if (!o.ok || !space.in_range(o.config)) continue;
    auto key = class_key(o.config, nullptr);
    if (!key) continue;
    for (auto& k : classes_)
      if (k.key == *key) k.ok_log_sizes.push_back(log_sizes(o.config, k.size_dims));
  }
  for (auto& k : classes_) fit(k);
}

std::optional<std::vector<int64_t>> FeasibilityModel::class_key(const Config& c, std::vector<size_t>* size_dims) const {
  if (!space_ || !space_->in_range(c)) return std::nullopt;
  std::vector<int64_t> key;
  for (size_t d = 0; d < space_->dims.size(); ++d) {
    const Dim& dim = space_->dims[d];
    if (dim.kind == DimKind::kFlag) continue;  // a compiler flag changes no index arithmetic
    const int64_t v = dim.values[static_cast<size_t>(c[d])];
    if (dim.kind == DimKind::kParam && v > 0) {
      key.push_back(-1);  // a size: compared by order
      if (size_dims) size_dims->push_back(d);
    } else {
      key.push_back(c[d]);  // a guard, or a sentinel value (0: the launcher's own): compared by equality
    }
  }
  return key;
}

std::vector<double> FeasibilityModel::log_sizes(const Config& c, const std::vector<size_t>& size_dims) const {
  std::vector<double> out;
  for (size_t d : size_dims) out.push_back(std::log(static_cast<double>(space_->dims[d].values[static_cast<size_t>(c[d])])));
  return out;
}

void FeasibilityModel::fit(Class& k) const {
  auto dominated_by = [](const std::vector<double>& a, const std::vector<double>& b) {  // a <= b everywhere
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] > b[i] + kEps) return false;
    return true;
  };
  for (const auto& ok : k.ok_log_sizes)
    for (const auto& f : k.failures)
      if (dominated_by(ok, f.log_size)) k.dominance = false;  // coverage is not monotone here: the model stands down
  if (!k.dominance || k.size_dims.empty() || k.size_dims.size() > kMaxProductDims) return;
  const size_t n = k.size_dims.size();
  const double log_margin = std::log(kProductMargin);
  std::vector<int> a(n, 0);
  while (true) {
    size_t d = 0;  // the next exponent vector in {0,1,2}^n
    while (d < n && ++a[d] == 3) a[d++] = 0;
    if (d == n) break;
    auto dot = [&](const std::vector<double>& ls) {
      double s = 0;
      for (size_t i = 0; i < n; ++i) s += a[i] * ls[i];
      return s;
    };
    bool consistent = true;
    for (size_t i = 0; i < k.failures.size() && consistent; ++i)
      for (size_t j = i + 1; j < k.failures.size() && consistent; ++j) {
        const auto &fi = k.failures[i], &fj = k.failures[j];
        const double predicted = std::log(fi.coverage) + dot(fj.log_size) - dot(fi.log_size);
        if (std::fabs(predicted - std::log(fj.coverage)) > kAgreeLog) consistent = false;
      }
    double threshold = std::numeric_limits<double>::infinity();
    for (const auto& f : k.failures) threshold = std::min(threshold, log_margin - std::log(f.coverage) + dot(f.log_size));
    for (const auto& ok : k.ok_log_sizes)
      if (dot(ok) < threshold) consistent = false;  // it would call a point measured correct short
    if (consistent) k.models.push_back({a, threshold});
  }
}

std::optional<InfeasiblePrediction> FeasibilityModel::predict(const Config& c) const {
  if (classes_.empty()) return std::nullopt;
  auto key = class_key(c, nullptr);
  if (!key) return std::nullopt;
  auto it = std::find_if(classes_.begin(), classes_.end(), [&](const Class& k) { return k.key == *key; });
  if (it == classes_.end() || !it->dominance) return std::nullopt;
  const Class& k = *it;
  const auto ls = log_sizes(c, k.size_dims);
  for (const auto& f : k.failures) {
    bool below = true;
    for (size_t i = 0; i < ls.size() && below; ++i) below = ls[i] <= f.log_size[i] + kEps;
    if (below) return InfeasiblePrediction{InfeasibleBasis::kDominated, f.config, 1 - f.coverage, 0};
  }
  if (k.models.empty()) return std::nullopt;
  double best_log = -std::numeric_limits<double>::infinity();
  const Failure* from = nullptr;
  for (const auto& m : k.models) {
    double dq = 0;
    for (size_t i = 0; i < ls.size(); ++i) dq += m.exponent[i] * ls[i];
    if (dq >= m.threshold) return std::nullopt;  // one consistent model lets it cover: not predicted
    for (const auto& f : k.failures) {
      double df = 0;
      for (size_t i = 0; i < ls.size(); ++i) df += m.exponent[i] * f.log_size[i];
      const double lc = std::log(f.coverage) + dq - df;
      if (lc > best_log) best_log = lc, from = &f;
    }
  }
  return InfeasiblePrediction{InfeasibleBasis::kProduct, from->config, 1 - from->coverage, std::min(1.0, std::exp(best_log))};
}

std::vector<std::string> FeasibilityModel::describe(const SearchSpace& s) const {
  std::vector<std::string> out;
  for (const auto& k : classes_) {
    std::vector<std::string> dims;
    for (size_t d : k.size_dims) dims.push_back(s.dims[d].name);
    std::string line = fmt::format("{} under-coverage failure(s) over sizes [{}]", k.failures.size(), util::join(dims, ", "));
    if (!k.dominance) {
      line += ": a point measured correct is dominated by one of them, so coverage is not monotone here: no prediction";
    } else if (k.models.empty()) {
      line += ": dominance only (no product model consistent with the measurements)";
    } else {
      std::vector<std::string> models;
      for (const auto& m : k.models) {
        std::vector<std::string> terms;
        for (size_t i = 0; i < m.exponent.size(); ++i)
          if (m.exponent[i]) terms.push_back(m.exponent[i] == 1 ? dims[i] : dims[i] + "^2");
        models.push_back(fmt::format("{} >= {:.4g}", util::join(terms, "*"), std::exp(m.threshold) / kProductMargin));
      }
      line += fmt::format(": dominance, and {} consistent product model(s): {}{}", k.models.size(),
                          util::join(std::vector<std::string>(
                                         models.begin(), models.begin() + static_cast<long>(std::min<size_t>(models.size(), 4))),
                                     "; "),
                          models.size() > 4 ? "; ..." : "");
    }
    out.push_back(line);
  }
  return out;
}

}  // namespace kopt::search
