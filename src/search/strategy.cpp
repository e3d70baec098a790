#include "search/strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <unordered_map>
#include <unordered_set>

#include "search/feasibility.h"

namespace kopt::search {

namespace {

constexpr double kEnumerateLimit = 60000;  // enumerate the allowed space when it is at most this large
constexpr size_t kSampledPool = 4000;      // otherwise sample this many valid points
constexpr size_t kModelShortlist = 400;    // candidates scored with the full surrogate
constexpr long kFirstDesignReach = 2;     // the first design of a parameter-only space: steps from the incumbent
constexpr double kKernelWidth = 1.0;       // k-NN residual kernel width, in index steps
constexpr double kKappa = 1.0;             // weight of uncertainty in the lower confidence bound

// Identity of a configuration: its mixed-radix index when the space has fewer than 2^62 points (exact),
// otherwise a 64-bit hash of the indices (collisions are astronomically unlikely at these pool sizes).
class KeyMaker {
 public:
  explicit KeyMaker(const SearchSpace& s) {
    double product = 1;
    for (const auto& d : s.dims) {
      strides_.push_back(static_cast<uint64_t>(product));
      product *= static_cast<double>(d.values.size());
    }
    exact_ = product < 4.6e18;
  }
  uint64_t operator()(const Config& c) const {
    uint64_t k = 0;
    if (exact_) {
      for (size_t d = 0; d < c.size() && d < strides_.size(); ++d) k += static_cast<uint64_t>(c[d]) * strides_[d];
      return k;
    }
    for (int v : c) k = (k ^ static_cast<uint64_t>(v + 1)) * 0x100000001b3ull + 0x9E3779B97F4A7C15ull;
    return k;
  }

 private:
  std::vector<uint64_t> strides_;
  bool exact_ = true;
};

int steps(const Config& a, const Config& b) {
  int d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += std::abs(a[i] - b[i]);
  return d;
}

// Additive model of log(time) with a residual k-NN correction.
class Surrogate {
 public:
  Surrogate(const SearchSpace& s, const std::vector<Observation>& obs) {
    double worst = -std::numeric_limits<double>::infinity();
    for (const auto& o : obs)
      if (o.time_ms && *o.time_ms > 0) worst = std::max(worst, std::log(*o.time_ms));
    if (!std::isfinite(worst)) worst = 0;
    for (const auto& o : obs) {
      if (!s.in_range(o.config)) continue;
      xs_.push_back(o.config);
      // A failed configuration counts as twice the slowest: the model steers away without exploding.
      ys_.push_back(o.time_ms && *o.time_ms > 0 ? std::log(*o.time_ms) : worst + std::log(2.0));
    }
    effect_.resize(s.dims.size());
    for (size_t d = 0; d < s.dims.size(); ++d) effect_[d].assign(s.dims[d].values.size(), 0.0);
    if (xs_.empty()) return;
    mu_ = std::accumulate(ys_.begin(), ys_.end(), 0.0) / static_cast<double>(ys_.size());
    double var = 0;
    for (double y : ys_) var += (y - mu_) * (y - mu_);
    spread_ = std::max(std::sqrt(var / static_cast<double>(ys_.size())), 0.05);
    backfit(s);
    res_.resize(xs_.size());
    for (size_t i = 0; i < xs_.size(); ++i) res_[i] = ys_[i] - additive(xs_[i]);
  }

  double additive(const Config& c) const {
    double y = mu_;
    for (size_t d = 0; d < c.size(); ++d) y += effect_[d][static_cast<size_t>(c[d])];
    return y;
  }

  // Prediction of log(time) and the distance (index steps) to the nearest observation.
  double predict(const Config& c, int* nearest) const {
    double num = 0, den = 0;
    int best = std::numeric_limits<int>::max();
    for (size_t i = 0; i < xs_.size(); ++i) {
      int d = steps(c, xs_[i]);
      best = std::min(best, d);
      if (d > 4) continue;
      double w = std::exp(-static_cast<double>(d * d) / (2 * kKernelWidth * kKernelWidth));
      num += w * res_[i];
      den += w;
    }
    if (nearest) *nearest = best;
    return additive(c) + num / (den + 0.3);
  }

  double spread() const { return spread_; }
  // How far the additive part misses the observations (RMS of its residuals, log time): how well the model has
  // been shown to predict, as opposed to spread(), the prior used for exploration.
  double residual_rms() const {
    if (res_.empty()) return spread_;
    double ss = 0;
    for (double r : res_) ss += r * r;
    return std::sqrt(ss / static_cast<double>(res_.size()));
  }

 private:
  void backfit(const SearchSpace& s) {
    const size_t n = xs_.size(), dims = s.dims.size();
    std::vector<double> fitted(n, mu_);
    for (int sweep = 0; sweep < 8; ++sweep) {
      for (size_t d = 0; d < dims; ++d) {
        const size_t nv = effect_[d].size();
        std::vector<double> sum(nv, 0.0);
        std::vector<int> count(nv, 0);
        for (size_t i = 0; i < n; ++i) {
          size_t v = static_cast<size_t>(xs_[i][d]);
          double partial = fitted[i] - effect_[d][v];  // the fit without this dimension
          sum[v] += ys_[i] - partial;
          count[v]++;
        }
        std::vector<double> fresh(nv, 0.0);
        std::vector<size_t> seen;
        for (size_t v = 0; v < nv; ++v) {
          if (!count[v]) continue;
          fresh[v] = sum[v] / (count[v] + 0.5);  // shrink values seen once toward zero
          seen.push_back(v);
        }
        // Unseen values: linear interpolation between the nearest seen ones, flat beyond the ends.
        for (size_t v = 0; v < nv && !seen.empty(); ++v) {
          if (count[v]) continue;
          auto hi = std::lower_bound(seen.begin(), seen.end(), v);
          if (hi == seen.begin()) fresh[v] = fresh[*hi];
          else if (hi == seen.end()) fresh[v] = fresh[seen.back()];
          else {
            size_t a = *(hi - 1), b = *hi;
            double t = static_cast<double>(v - a) / static_cast<double>(b - a);
            fresh[v] = (1 - t) * fresh[a] + t * fresh[b];
          }
        }
        // Centre over the observations so mu_ keeps the mean.
        double centre = 0;
        for (size_t i = 0; i < n; ++i) centre += fresh[static_cast<size_t>(xs_[i][d])];
        centre /= static_cast<double>(n);
        for (auto& f : fresh) f -= centre;
        for (size_t i = 0; i < n; ++i) {
          size_t v = static_cast<size_t>(xs_[i][d]);
          fitted[i] += fresh[v] - effect_[d][v];
        }
        effect_[d] = std::move(fresh);
      }
    }
  }

  std::vector<Config> xs_;
  std::vector<double> ys_, res_;
  std::vector<std::vector<double>> effect_;
  double mu_ = 0, spread_ = 0.05;
};

class Proposer {
 public:
  explicit Proposer(const StrategyInput& in)
      : in_(in), s_(*in.space), key_(*in.space), rng_(in.seed * 0x9E3779B97F4A7C15ull + 17) {
    for (const auto& k : s_.constraints) {
      std::vector<int> dims;
      for (const auto& name : k.expr.slot_names()) dims.push_back(s_.dim_index(name));
      constraint_dims_.push_back(std::move(dims));
    }
    allowed_ = in.allowed;
    if (allowed_.size() != s_.dims.size()) {
      allowed_.assign(s_.dims.size(), {});
      for (size_t d = 0; d < s_.dims.size(); ++d) {
        allowed_[d].resize(s_.dims[d].values.size());
        std::iota(allowed_[d].begin(), allowed_[d].end(), 0);
      }
    }
    for (auto& a : allowed_) std::sort(a.begin(), a.end());
    for (const auto& o : in.history)
      if (s_.in_range(o.config)) taken_.insert(key_(o.config));
    for (const auto& c : in.exclude)
      if (s_.in_range(c)) taken_.insert(key_(c));
    // The feasibility model: only failures that left outputs unwritten teach it anything (search/feasibility.h).
    if (std::any_of(in.history.begin(), in.history.end(),
                    [](const Observation& o) { return o.unwritten_fraction.has_value(); })) {
      std::vector<FeasibilityObservation> fo;
      for (const auto& o : in.history) fo.push_back({o.config, o.time_ms.has_value(), o.unwritten_fraction});
      feasibility_ = FeasibilityModel(s_, fo);
    }
    free_dims_ = 0;
    for (const auto& a : allowed_) free_dims_ += a.size() > 1;
  }

  Outlook outlook() {
    Outlook o;
    for (const auto& h : in_.history) o.observations += s_.in_range(h.config);
    for (const auto& a : allowed_)
      if (a.empty()) return o;
    if (s_.dims.empty()) return o;
    build_pool();
    double product = 1;
    for (const auto& a : allowed_) product *= static_cast<double>(a.size());
    o.remaining = product <= kEnumerateLimit ? static_cast<long>(pool_.size()) : -1;
    o.predicted_infeasible = predicted_infeasible_;
    if (pool_.empty() || o.observations == 0) return o;
    Surrogate model(s_, in_.history);
    // The bound: the prediction less twice the model's demonstrated error (with a floor of 0.2%): a model that
    // fits the measurements badly (interactions the additive part misses) never claims there is nothing left.
    const double err = std::max(model.residual_rms(), 0.002);
    double best = std::numeric_limits<double>::infinity();
    for (const auto& c : pool_) {
      double lcb = model.predict(c, nullptr) - 2 * err;
      if (lcb < best) best = lcb, o.best_config = c;
    }
    o.best_lcb_ms = std::exp(best);
    return o;
  }

  std::vector<Proposal> run() {
    if (s_.dims.empty() || in_.k <= 0) return {};
    for (const auto& a : allowed_)
      if (a.empty()) return {};
    build_pool();
    const size_t n_init = std::min<size_t>(12, std::max<size_t>(static_cast<size_t>(in_.k), free_dims_ + 2));
    size_t observed = 0;
    for (const auto& o : in_.history) observed += s_.in_range(o.config);

    std::vector<Proposal> out;
    // The caller's suggestions first (a warm start from other shapes' measurements): they count toward the first
    // design, which then fills what they leave.
    for (const auto& sug : in_.suggested) {
      if (out.size() >= static_cast<size_t>(in_.k)) break;
      if (!usable(sug.config)) continue;
      take(sug.config);
      out.push_back({sug.config, sug.reason, std::nullopt});
    }
    if (out.size() < static_cast<size_t>(in_.k))
      if (auto p = projected_incumbent()) out.push_back(*p);
    if (out.size() < static_cast<size_t>(in_.k) && observed + out.size() < n_init) {
      size_t want = std::min<size_t>(static_cast<size_t>(in_.k) - out.size(), n_init - observed - out.size());
      const auto held = held_values();
      if (std::any_of(held.begin(), held.end(), [](int v) { return v >= 0; })) {
        // This iteration switches declared methods on (the picks): the rest of the first design is space-filling
        // over the parameters with those picks held on. The incumbent with them (above) tests them where the kernel
        // works; the design finds the parameters they need (a method often pays only with other tile shapes, and
        // one-step moves from the defaults without it measure the wrong kernel). The model phase frees them again.
        for (auto& c : initial_design(want, &held))
          out.push_back({c, "initial design with this iteration's methods", std::nullopt});
      } else if (has_declared_methods()) {
        // The kernel declares methods but the profile picked none of them: the whole first design is space-filling
        // over parameters and methods. The good points of such spaces lie several moves from the defaults (methods
        // on, other tile shapes), which one-step moves reach only in a later iteration (docs/SEARCH.md, "No method
        // picked in a declared space").
        for (auto& c : initial_design(want)) out.push_back({c, "initial design", std::nullopt});
      } else {
        // A space of parameters only (derived from a plain kernel, or declared without methods): three quarters are
        // the incumbent's one-step neighbours (one parameter moved at a time, as a kernel engineer starts), the rest
        // space-filling: the first measures each parameter's effect where the kernel already works, which is what
        // the additive model fits; the second keeps the far corners in view.
        // The space-filling part stays within kFirstDesignReach steps of the incumbent on each dimension: a derived
        // space spans the legal range (block sizes 32..1024, tiles d/8..8d), and its far corners (the largest tiles,
        // the most work a thread) are the slowest to compile and rarely the best; the model phase reaches them
        // when the measurements point there (issue 35).
        for (auto& c : one_step_neighbours(want * 3 / 4)) out.push_back({c, "one step from the incumbent", std::nullopt});
        auto ranked = ranked_observations(1);
        for (auto& c : initial_design(want - std::min(want, out.size()), nullptr, ranked.empty() ? nullptr : &ranked.front()))
          out.push_back({c, "initial design near the incumbent", std::nullopt});
      }
    }
    if (out.size() < static_cast<size_t>(in_.k)) model_phase(out);
    return out;
  }

 private:
  bool usable(const Config& c) const { return !taken_.count(key_(c)) && valid(c) && !predicted_infeasible(c); }

  // The feasibility model predicts `c` infeasible (memoized: the design's repairs ask about the same points often).
  bool predicted_infeasible(const Config& c) const {
    if (!feasibility_.active()) return false;
    const uint64_t k = key_(c);
    auto it = infeasible_.find(k);
    if (it == infeasible_.end()) it = infeasible_.emplace(k, feasibility_.predict(c).has_value()).first;
    return it->second;
  }

  // SearchSpace::valid with the constraint names resolved once.
  bool valid(const Config& c) const {
    if (!s_.in_range(c)) return false;
    std::vector<int64_t> values;
    for (size_t k = 0; k < s_.constraints.size(); ++k) {
      values.clear();
      for (int d : constraint_dims_[k]) {
        if (d < 0) return false;
        values.push_back(s_.dims[static_cast<size_t>(d)].values[static_cast<size_t>(c[static_cast<size_t>(d)])]);
      }
      auto v = s_.constraints[k].expr.eval_slots(values);
      if (!v || *v == 0) return false;
    }
    return true;
  }

  void take(const Config& c) { taken_.insert(key_(c)); }

  Config random_config() {
    Config c(s_.dims.size());
    for (size_t d = 0; d < c.size(); ++d) c[d] = allowed_[d][rng_() % allowed_[d].size()];
    return c;
  }

  void build_pool() {
    double product = 1;
    for (const auto& a : allowed_) product *= static_cast<double>(a.size());
    pool_.clear();
    predicted_infeasible_ = 0;
    if (product <= kEnumerateLimit) {
      Config c(s_.dims.size());
      std::vector<size_t> pos(s_.dims.size(), 0);
      while (true) {
        for (size_t d = 0; d < c.size(); ++d) c[d] = allowed_[d][pos[d]];
        if (usable(c)) pool_.push_back(c);
        else if (!taken_.count(key_(c)) && valid(c))
          ++predicted_infeasible_;  // left out by the feasibility model
        size_t d = 0;
        while (d < pos.size() && ++pos[d] == allowed_[d].size()) pos[d++] = 0;
        if (d == pos.size()) break;
      }
    } else {
      std::unordered_set<uint64_t> seen;
      for (size_t tries = 0; tries < kSampledPool * 20 && pool_.size() < kSampledPool; ++tries) {
        Config c = random_config();
        if (usable(c) && seen.insert(key_(c)).second) pool_.push_back(c);
      }
      // The neighbourhoods of the best observations always belong to the pool.
      for (const auto& inc : ranked_observations(8))
        for (auto& n : neighbours(inc))
          if (seen.insert(key_(n)).second) pool_.push_back(n);
    }
  }

  // Observed configurations from fastest to slowest (failures last), projected onto the allowed values.
  std::vector<Config> ranked_observations(size_t limit) const {
    std::vector<const Observation*> ok;
    for (const auto& o : in_.history)
      if (o.time_ms && s_.in_range(o.config)) ok.push_back(&o);
    std::stable_sort(ok.begin(), ok.end(), [](const Observation* a, const Observation* b) { return *a->time_ms < *b->time_ms; });
    std::vector<Config> out;
    for (size_t i = 0; i < ok.size() && out.size() < limit; ++i) out.push_back(project(ok[i]->config));
    return out;
  }

  Config project(const Config& c) const {
    Config p = c;
    for (size_t d = 0; d < p.size(); ++d) {
      const auto& a = allowed_[d];
      if (std::binary_search(a.begin(), a.end(), p[d])) continue;
      int best = a.front();
      for (int v : a)
        if (std::abs(v - p[d]) < std::abs(best - p[d])) best = v;
      p[d] = best;
    }
    return p;
  }

  // The incumbent with this iteration's pinned and preferred values (e.g. a newly picked method switched on),
  // when that differs from anything measured: the cleanest test of the new methods.
  std::optional<Proposal> projected_incumbent() {
    auto ranked = ranked_observations(1);
    if (ranked.empty()) return std::nullopt;
    Config p = ranked.front();
    for (size_t d = 0; d < p.size(); ++d)
      if (prefers(d)) p[d] = in_.prefer[d];
    if (!usable(p)) return std::nullopt;
    take(p);
    return Proposal{p, "incumbent with this iteration's methods", std::nullopt};
  }

  // Unmeasured, valid configurations one or two allowed steps from `c`.
  std::vector<Config> neighbours(const Config& c) const {
    std::vector<Config> out;
    auto step = [&](const Config& base, size_t d, int dir) -> std::optional<Config> {
      const auto& a = allowed_[d];
      auto it = std::lower_bound(a.begin(), a.end(), base[d]);
      if (it == a.end() || *it != base[d]) return std::nullopt;
      long pos = (it - a.begin()) + dir;
      if (pos < 0 || pos >= static_cast<long>(a.size())) return std::nullopt;
      Config n = base;
      n[d] = a[static_cast<size_t>(pos)];
      return n;
    };
    for (size_t d = 0; d < c.size(); ++d)
      for (int dir : {-1, 1})
        if (auto n = step(c, d, dir); n && usable(*n)) out.push_back(*n);
    for (size_t d = 0; d < c.size(); ++d)
      for (size_t e = d + 1; e < c.size(); ++e)
        for (int dd : {-1, 1})
          for (int de : {-1, 1})
            if (auto n = step(c, d, dd))
              if (auto m = step(*n, e, de); m && usable(*m)) out.push_back(*m);
    return out;
  }

  // Up to `m` unmeasured valid configurations one allowed step from the best observation: first one per
  // dimension (dimensions in random order, a random direction first, the other where that one is not valid),
  // then the remaining directions.
  std::vector<Config> one_step_neighbours(size_t m) {
    std::vector<Config> out;
    auto ranked = ranked_observations(1);
    if (m == 0 || ranked.empty()) return out;
    const Config& inc = ranked.front();
    auto moved = [&](size_t d, int dir) -> std::optional<Config> {
      const auto& a = allowed_[d];
      auto it = std::lower_bound(a.begin(), a.end(), inc[d]);
      if (it == a.end() || *it != inc[d]) return std::nullopt;
      const long pos = (it - a.begin()) + dir;
      if (pos < 0 || pos >= static_cast<long>(a.size())) return std::nullopt;
      Config n = inc;
      n[d] = a[static_cast<size_t>(pos)];
      if (!usable(n)) return std::nullopt;
      return n;
    };
    std::vector<size_t> dims(inc.size());
    std::iota(dims.begin(), dims.end(), 0);
    std::shuffle(dims.begin(), dims.end(), rng_);
    std::vector<std::pair<size_t, int>> later;
    for (size_t d : dims) {
      const int first = (rng_() & 1) ? 1 : -1;
      std::optional<Config> n;
      if (out.size() < m && (n = moved(d, first))) {
        later.push_back({d, -first});
      } else if (out.size() < m) {
        n = moved(d, -first);
      }
      if (n) take(*n), out.push_back(std::move(*n));
    }
    for (const auto& [d, dir] : later)
      if (out.size() < m)
        if (auto n = moved(d, dir)) take(*n), out.push_back(std::move(*n));
    return out;
  }

  // Per dimension, the preferred value index of a picked declared method when this iteration allows it, else -1.
  // Only a kernel's declared methods (guards) are held: they restructure the code and need their own parameters. A
  // compiler-flag pick alone keeps the one-step start, which is what spaces of parameters (derived from a plain
  // kernel, plus the flags) were measured to need (docs/SEARCH.md, "The one-step start").
  std::vector<int> held_values() const {
    std::vector<int> held(s_.dims.size(), -1);
    for (size_t d = 0; d < held.size(); ++d)
      if (s_.dims[d].kind == DimKind::kGuard && prefers(d)) held[d] = in_.prefer[d];
    return held;
  }

  // The kernel's author declared methods (@kopt method guards): an annotated space, not one derived from a plain kernel.
  bool has_declared_methods() const {
    return !s_.derived && std::any_of(s_.dims.begin(), s_.dims.end(), [](const Dim& d) { return d.kind == DimKind::kGuard; });
  }

  // This iteration prefers a value of dimension d (StrategyInput::prefer) that it allows.
  bool prefers(size_t d) const {
    return d < in_.prefer.size() && in_.prefer[d] >= 0 &&
           std::binary_search(allowed_[d].begin(), allowed_[d].end(), in_.prefer[d]);
  }

  // Latin-hypercube-like: each dimension's allowed values split into `m` strata, one sample per stratum,
  // columns shuffled independently; invalid rows are repaired; the best of several draws by maximin.
  // `held` (per dimension, a value index or -1) keeps those dimensions at one value in every row.
  // `around` (a configuration) keeps every dimension within kFirstDesignReach allowed steps of its value.
  std::vector<Config> initial_design(size_t m, const std::vector<int>* held = nullptr, const Config* around = nullptr) {
    if (m == 0 || pool_.empty()) return {};
    std::vector<std::vector<int>> allowed = allowed_;
    if (around)
      for (size_t d = 0; d < allowed.size() && d < around->size(); ++d) {
        const auto& a = allowed_[d];
        auto it = std::lower_bound(a.begin(), a.end(), (*around)[d]);
        if (it == a.end() || *it != (*around)[d]) continue;
        const long at = it - a.begin();
        const long lo = std::max<long>(0, at - kFirstDesignReach);
        const long hi = std::min<long>(static_cast<long>(a.size()), at + kFirstDesignReach + 1);
        allowed[d].assign(a.begin() + lo, a.begin() + hi);
      }
    auto in_band = [&](const Config& c) {
      for (size_t d = 0; d < c.size(); ++d)
        if (!std::binary_search(allowed[d].begin(), allowed[d].end(), c[d])) return false;
      return true;
    };
    auto is_held = [&](size_t d) { return held && d < held->size() && (*held)[d] >= 0; };
    auto keeps_held = [&](const Config& c) {
      for (size_t d = 0; d < c.size(); ++d)
        if (is_held(d) && c[d] != (*held)[d]) return false;
      return true;
    };
    std::vector<size_t> free_dims;
    for (size_t d = 0; d < s_.dims.size(); ++d)
      if (!is_held(d)) free_dims.push_back(d);
    // Valid points that keep the held values: where a row that cannot be repaired is replaced from.
    std::vector<const Config*> fallback;
    for (const auto& c : pool_)
      if (keeps_held(c) && in_band(c)) fallback.push_back(&c);
    if (fallback.empty())
      for (const auto& c : pool_)
        if (keeps_held(c)) fallback.push_back(&c);
    if (fallback.empty())
      for (const auto& c : pool_) fallback.push_back(&c);
    std::vector<Config> best;
    double best_score = -1;
    std::vector<Config> measured;
    for (const auto& o : in_.history)
      if (s_.in_range(o.config)) measured.push_back(o.config);
    for (int draw = 0; draw < 24; ++draw) {
      std::vector<Config> rows(m, Config(s_.dims.size()));
      for (size_t d = 0; d < s_.dims.size(); ++d) {
        if (is_held(d)) {
          for (auto& r : rows) r[d] = (*held)[d];
          continue;
        }
        const auto& a = allowed[d];
        std::vector<size_t> strata(m);
        std::iota(strata.begin(), strata.end(), 0);
        std::shuffle(strata.begin(), strata.end(), rng_);
        for (size_t r = 0; r < m; ++r) {
          size_t lo = strata[r] * a.size() / m, hi = (strata[r] + 1) * a.size() / m;
          if (hi <= lo) hi = lo + 1;
          rows[r][d] = a[std::min(a.size() - 1, lo + rng_() % (hi - lo))];
        }
      }
      std::unordered_set<uint64_t> in_draw;
      for (auto& r : rows) {
        for (int fix = 0; fix < 64 && !free_dims.empty() && (!usable(r) || in_draw.count(key_(r))); ++fix) {
          size_t d = free_dims[rng_() % free_dims.size()];
          r[d] = allowed[d][rng_() % allowed[d].size()];
        }
        if (!usable(r) || in_draw.count(key_(r))) r = *fallback[rng_() % fallback.size()];
        in_draw.insert(key_(r));
      }
      if (in_draw.size() < rows.size()) continue;  // duplicates left after repair
      double score = std::numeric_limits<double>::infinity();
      for (size_t i = 0; i < rows.size(); ++i) {
        for (size_t j = i + 1; j < rows.size(); ++j) score = std::min(score, static_cast<double>(steps(rows[i], rows[j])));
        for (const auto& x : measured) score = std::min(score, static_cast<double>(steps(rows[i], x)));
      }
      if (score > best_score) best_score = score, best = rows;
    }
    for (const auto& r : best) take(r);
    return best;
  }

  void model_phase(std::vector<Proposal>& out) {
    std::vector<Observation> obs = in_.history;
    Surrogate model(s_, obs);
    // Shortlist: best by the additive part, the incumbents' neighbourhoods, and a random sample.
    std::vector<size_t> order;
    for (size_t i = 0; i < pool_.size(); ++i)
      if (!taken_.count(key_(pool_[i]))) order.push_back(i);
    if (order.empty()) return;
    std::vector<double> add(pool_.size(), 0);
    for (size_t i : order) add[i] = model.additive(pool_[i]);
    std::vector<size_t> shortlist = order;
    if (shortlist.size() > kModelShortlist) {
      std::partial_sort(shortlist.begin(), shortlist.begin() + kModelShortlist, shortlist.end(),
                        [&](size_t a, size_t b) { return add[a] < add[b]; });
      shortlist.resize(kModelShortlist);
      for (int r = 0; r < 100; ++r) shortlist.push_back(order[rng_() % order.size()]);
    }
    std::sort(shortlist.begin(), shortlist.end());
    shortlist.erase(std::unique(shortlist.begin(), shortlist.end()), shortlist.end());

    struct Scored {
      Config c;
      double pred;
      int nearest;
    };
    std::vector<Scored> scored;
    std::unordered_set<uint64_t> listed;
    for (size_t i : shortlist) {
      int nearest = 0;
      double p = model.predict(pool_[i], &nearest);
      scored.push_back({pool_[i], p, nearest});
      listed.insert(key_(pool_[i]));
    }
    auto ranked = ranked_observations(5);
    for (const auto& inc : ranked)
      for (auto& n : neighbours(inc))
        if (listed.insert(key_(n)).second) {
          int nearest = 0;
          double p = model.predict(n, &nearest);
          scored.push_back({n, p, nearest});
        }

    auto sigma = [&](int nearest) { return model.spread() * (1 - std::exp(-nearest / 1.5)); };
    auto chosen_update = [&](const Config& c) {
      for (auto& sc : scored) sc.nearest = std::min(sc.nearest, steps(sc.c, c));
    };
    for (const auto& p : out) chosen_update(p.config);

    const size_t k = static_cast<size_t>(in_.k);
    for (size_t slot = out.size(); slot < k; ++slot) {
      std::optional<Proposal> pick;
      if (!local_done_) {  // the first model-phase slot goes to local search
        pick = local_pick(model, ranked);
        local_done_ = true;
      }
      if (!pick && k >= 4 && slot % 4 == 3) pick = exploration_pick(out);
      if (!pick) {
        const Scored* best = nullptr;
        double best_lcb = std::numeric_limits<double>::infinity();
        for (const auto& sc : scored) {
          if (taken_.count(key_(sc.c))) continue;
          double lcb = sc.pred - kKappa * sigma(sc.nearest);
          if (lcb < best_lcb) best_lcb = lcb, best = &sc;
        }
        if (best) pick = Proposal{best->c, "model", std::exp(best->pred)};
      }
      if (!pick) pick = exploration_pick(out);
      if (!pick) break;
      take(pick->config);
      chosen_update(pick->config);
      out.push_back(*pick);
    }
  }

  // The best predicted unmeasured neighbour of the incumbent (or of the next best observations).
  std::optional<Proposal> local_pick(const Surrogate& model, const std::vector<Config>& ranked) {
    for (const auto& inc : ranked) {
      const Config* best = nullptr;
      double best_pred = std::numeric_limits<double>::infinity();
      auto ns = neighbours(inc);
      for (const auto& n : ns) {
        double p = model.predict(n, nullptr);
        if (p < best_pred) best_pred = p, best = &n;
      }
      if (best) return Proposal{*best, "neighbour of the incumbent", std::exp(best_pred)};
    }
    return std::nullopt;
  }

  // The unmeasured point farthest from everything measured or proposed, among a random sample.
  std::optional<Proposal> exploration_pick(const std::vector<Proposal>& out) {
    std::vector<Config> known;
    for (const auto& o : in_.history)
      if (s_.in_range(o.config)) known.push_back(o.config);
    for (const auto& p : out) known.push_back(p.config);
    const Config* best = nullptr;
    int best_d = -1;
    for (int r = 0; r < 300 && !pool_.empty(); ++r) {
      const Config& c = pool_[rng_() % pool_.size()];
      if (taken_.count(key_(c))) continue;
      int d = std::numeric_limits<int>::max();
      for (const auto& x : known) d = std::min(d, steps(c, x));
      if (d > best_d) best_d = d, best = &c;
    }
    if (!best) {
      for (const auto& c : pool_)
        if (!taken_.count(key_(c))) return Proposal{c, "exploration", std::nullopt};
      return std::nullopt;
    }
    return Proposal{*best, "exploration", std::nullopt};
  }

  const StrategyInput& in_;
  const SearchSpace& s_;
  KeyMaker key_;
  std::mt19937_64 rng_;
  std::vector<std::vector<int>> constraint_dims_;
  std::vector<std::vector<int>> allowed_;
  std::unordered_set<uint64_t> taken_;
  std::vector<Config> pool_;
  FeasibilityModel feasibility_;
  mutable std::unordered_map<uint64_t, bool> infeasible_;
  long predicted_infeasible_ = 0;  // valid, unmeasured points of the enumerated pool the model left out
  size_t free_dims_ = 0;
  bool local_done_ = false;
};

}  // namespace

std::vector<Proposal> propose_configs(const StrategyInput& in) {
  if (!in.space) return {};
  Proposer p(in);
  auto out = p.run();
  // Every proposal must be allowed, valid and new; drop anything that is not (defensive, cheap).
  std::vector<Proposal> checked;
  KeyMaker key(*in.space);
  std::unordered_set<uint64_t> seen;
  for (const auto& o : in.history)
    if (in.space->in_range(o.config)) seen.insert(key(o.config));
  for (const auto& c : in.exclude)
    if (in.space->in_range(c)) seen.insert(key(c));
  for (auto& pr : out)
    if (in.space->valid(pr.config) && seen.insert(key(pr.config)).second) checked.push_back(std::move(pr));
  if (checked.size() > static_cast<size_t>(std::max(in.k, 0))) checked.resize(static_cast<size_t>(in.k));
  return checked;
}

Outlook space_outlook(const StrategyInput& in) {
  if (!in.space) return {};
  Proposer p(in);
  return p.outlook();
}

}  // namespace kopt::search
