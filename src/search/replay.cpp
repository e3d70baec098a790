#include "search/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "search/builtin_generator.h"
#include "search/feasibility.h"
#include "search/strategy.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::search {

std::string_view replay_policy_name(ReplayPolicy p) { return p == ReplayPolicy::kLoop ? "loop" : "free"; }

std::optional<ReplayPolicy> parse_replay_policy(std::string_view s) {
  if (s == "loop") return ReplayPolicy::kLoop;
  if (s == "free") return ReplayPolicy::kFree;
  return std::nullopt;
}

std::map<std::string, double> metrics_firing(const Registry& reg, const std::vector<std::string>& method_ids) {
  std::map<std::string, double> m;
  for (const auto& id : method_ids) {
    const Method* meth = reg.find(id);
    if (!meth) continue;
    for (const auto& e : meth->evidence) {
      double step = std::max(std::fabs(e.value), 1.0);
      bool greater = e.op == CompareOp::kGreater || e.op == CompareOp::kGreaterEqual;
      m.emplace(e.metric, greater ? e.value + step : e.value - step);  // keeps an earlier value
    }
  }
  return m;
}

double random_mean_draws(size_t n, size_t m) { return (static_cast<double>(n) + 1) / (static_cast<double>(m) + 1); }

double random_hit_probability(size_t n, size_t m, int e) {
  // 1 - P(the first e draws all miss) = 1 - prod_{i<e} (n - m - i) / (n - i).
  double miss = 1;
  for (int i = 0; i < e && static_cast<size_t>(i) < n; ++i) {
    double bad = static_cast<double>(n - m) - i;
    if (bad <= 0) return 1;
    miss *= bad / (static_cast<double>(n) - i);
  }
  return 1 - miss;
}

namespace {

struct Lookup {
  CandidateStatus status = CandidateStatus::kOk;
  std::optional<double> ms;
  bool unknown = false;
  std::optional<double> unwritten;  // a failure that left this share of an output unwritten
};

Lookup look_up(const SpaceTable& t, const Config& c) {
  auto it = t.ms.find(c);
  if (it == t.ms.end()) return {CandidateStatus::kIncorrect, std::nullopt, true, std::nullopt};
  if (!it->second) {
    auto u = t.unwritten.find(c);
    return {CandidateStatus::kIncorrect, std::nullopt, false,
            u == t.unwritten.end() ? std::nullopt : std::optional<double>(u->second)};
  }
  return {CandidateStatus::kOk, it->second, false, std::nullopt};
}

// A measurement of the replay: what the loop's history holds for a candidate the table answered.
Measurement measured(Candidate c, const Lookup& l, int iteration) {
  Measurement m{std::move(c), l.status, l.ms, iteration};
  m.unwritten_fraction = l.unwritten;
  return m;
}

class Replayer {
 public:
  Replayer(const ReplayInput& in, std::string source_text, double target_ms)
      : in_(in), s_(*in.space), o_(in.options), text_(std::move(source_text)), target_ms_(target_ms) {}

  Result<ReplayRun> run(uint64_t seed, std::vector<std::string>* notes) {
    ReplayRun r;
    r.seed = seed;
    Candidate base = baseline_candidate(s_, *in_.registry, in_.source, text_);
    Lookup b = look_up(*in_.table, *base.config);
    history_.clear();
    verdicts_.clear();
    ablations_.clear();
    history_.push_back(measured(base, b, 0));
    r.evaluations = 1;
    r.evaluated.push_back(*base.config);
    size_t champion = 0;
    if (b.ms && *b.ms <= target_ms_) r.hit_evaluation = 1, r.hit_iteration = 0;
    int without_gain = 0;
    int exploring_without_gain = 0;  // the loop's exploration rule (loop/decisions.h StopState::explore_patience)
    bool exploring = false;
    BuiltinGenerator gen;
    for (int it = 1; it <= o_.iterations && !r.hit_evaluation; ++it) {
      if (o_.patience > 0 && without_gain >= o_.patience) {
        r.end = "patience";
        break;
      }
      if (o_.explore_patience > 0 && exploring_without_gain >= o_.explore_patience) {
        r.end = "exploration_spent";
        break;
      }
      std::vector<Candidate> cands;
      if (o_.policy == ReplayPolicy::kLoop) {
        GeneratorInput gi;
        gi.iteration = it;
        gi.k = o_.branches;
        gi.seed = seed + static_cast<uint64_t>(it);  // as optimize: --search-seed + iteration
        for (Axis a : kAllAxes) gi.plan.slots[a] = std::max<int>(1, static_cast<int>(s_.offered_methods().size()));
        gi.registry = in_.registry;
        gi.space = &s_;
        gi.baseline_source = in_.source;
        gi.champion = history_[champion];
        gi.history = history_;
        gi.ablations = ablations_;
        gi.verdicts = verdicts_;
        gi.metrics = o_.metrics;
        gi.warm_start = o_.suggested;  // as the loop: every iteration (Optimizer's GeneratorInput::warm_start)
        auto out = gen.generate(gi);
        if (!out) return out.error();
        if (notes && it == 1) {
          notes->push_back("iteration 1 method selection: " +
                           (out->selection.picks.empty() ? std::string("nothing picked") : "picked " + util::join(out->selection.ids(), ", ")));
          for (const auto& skip : out->selection.skipped) notes->push_back("  skipped " + skip.id + ": " + skip.reason);
        }
        cands = std::move(out->candidates);
        exploring = out->exploring;
      } else {
        StrategyInput st;
        st.space = &s_;
        for (const auto& m : history_)
          st.history.push_back(
              {*m.candidate.config, m.status == CandidateStatus::kOk ? m.median_ms : std::nullopt, m.unwritten_fraction});
        st.suggested = o_.suggested;
        st.k = o_.branches;
        st.seed = seed + static_cast<uint64_t>(it) + static_cast<uint64_t>(it) * 1000003ull;  // as the generator
        for (auto& p : propose_configs(st))
          cands.push_back(candidate_from_config(s_, *in_.registry, p.config, in_.source, text_, "builtin"));
      }
      r.iterations = it;
      if (cands.empty()) {
        r.end = "exhausted";
        break;
      }
      size_t before = champion;
      for (auto& c : cands) {
        // As the loop (Optimizer::MeasureBatch::predicted_infeasible): a candidate the feasibility model predicts
        // infeasible after the failures measured so far, this batch's included, is built and not measured.
        if (auto why = predicted_infeasible(c)) {
          if (c.config) r.skipped.push_back(*c.config);
          Measurement m{c, CandidateStatus::kIncorrect, std::nullopt, it};
          m.predicted_infeasible = *why;
          history_.push_back(std::move(m));
          continue;
        }
        Lookup l =
            c.config ? look_up(*in_.table, *c.config) : Lookup{CandidateStatus::kIncorrect, std::nullopt, true, std::nullopt};
        ++r.evaluations;
        r.unknown += l.unknown;
        const bool suggested = c.config && is_suggested(*c.config);
        r.suggested_evaluated += suggested;
        if (c.config) r.evaluated.push_back(*c.config);
        history_.push_back(measured(c, l, it));
        if (l.ms && (!history_[champion].median_ms || *l.ms < *history_[champion].median_ms)) champion = history_.size() - 1;
        if (l.ms && *l.ms <= target_ms_ && !r.hit_evaluation)
          r.hit_evaluation = r.evaluations, r.hit_iteration = it, r.hit_suggested = suggested;
      }
      exploring_without_gain = exploring && champion == before ? exploring_without_gain + 1 : 0;
      if (champion != before) {
        without_gain = 0;
        const size_t before_ablation = ablations_.size();
        r.ablations += ablate(history_[champion], it);
        // The fastest variant clearly faster than the champion is selected as a candidate would be (the loop's
        // Optimizer::adopt_ablations); it is an evaluation of the run from then on.
        std::optional<size_t> best;
        for (size_t a = before_ablation; o_.promote_ablations && a < ablations_.size(); ++a)
          if (ablations_[a].median_ms && *ablations_[a].median_ms < *history_[champion].median_ms * 0.99 &&
              (!best || *ablations_[a].median_ms < *ablations_[*best].median_ms))
            best = a;
        if (best) {
          Measurement m = ablations_[*best];
          ablations_.erase(ablations_.begin() + static_cast<std::ptrdiff_t>(*best));
          ++r.evaluations;
          if (m.candidate.config) r.evaluated.push_back(*m.candidate.config);
          history_.push_back(m);
          champion = history_.size() - 1;
          if (*m.median_ms <= target_ms_ && !r.hit_evaluation) r.hit_evaluation = r.evaluations, r.hit_iteration = it;
        }
      } else {
        ++without_gain;
      }
    }
    if (r.hit_evaluation) r.end = "reached";
    else if (r.end.empty()) r.end = "iterations";
    r.best_found_ms = history_[champion].median_ms.value_or(0);
    return r;
  }

 private:
  bool is_suggested(const Config& c) const {
    return std::any_of(o_.suggested.begin(), o_.suggested.end(), [&](const Suggestion& s) { return s.config == c; });
  }

  std::optional<std::string> predicted_infeasible(const Candidate& c) const {
    if (!c.config) return std::nullopt;
    std::vector<FeasibilityObservation> obs;
    bool signal = false;
    for (const auto* list : {&history_, &ablations_})
      for (const auto& m : *list) {
        if (!m.candidate.config || m.predicted_infeasible) continue;
        obs.push_back({*m.candidate.config, m.status == CandidateStatus::kOk, m.unwritten_fraction});
        signal = signal || m.unwritten_fraction.has_value();
      }
    if (!signal) return std::nullopt;
    auto p = FeasibilityModel(s_, obs).predict(*c.config);
    if (!p) return std::nullopt;
    return p->reason(s_);
  }

  // The loop ablates each method the new champion has on; here the table answers: the champion with that guard
  // off, effective when that is more than 1% slower (the loop's paired CI at a few rounds resolves about that).
  // Returns the variants built (what the real loop would measure besides).
  int ablate(const Measurement& champ, int iteration) {
    int built = 0;
    for (const auto& [id, on] : champ.candidate.guards) built += on;
    if (!champ.candidate.config || !champ.median_ms) return built;
    for (const auto& [id, on] : champ.candidate.guards) {
      if (!on) continue;
      const int d = s_.method_dim(id);
      if (d < 0) continue;
      Config off = *champ.candidate.config;
      off[static_cast<size_t>(d)] = s_.dims[static_cast<size_t>(d)].default_index;
      Lookup l = look_up(*in_.table, off);
      MethodVerdict v;
      v.method = id;
      v.iteration = iteration;
      v.measured_gain = l.ms && *l.ms > *champ.median_ms * 1.01;
      v.verdict = v.measured_gain ? Verdict::kEffective : Verdict::kIneffective;
      if (l.ms) v.saved_ms = *l.ms - *champ.median_ms;
      verdicts_.push_back(v);
      // The loop keeps what its ablation measured, and so does the replay (GeneratorInput::ablations).
      ablations_.push_back(measured(candidate_from_config(s_, *in_.registry, off, in_.source, text_, "ablation"), l, iteration));
    }
    if (!o_.param_ablation) return built;
    // Each parameter the champion changed from the baseline, reverted alone (a variant breaking a constraint is not built).
    const Config& cc = *champ.candidate.config;
    for (size_t d = 0; d < s_.dims.size(); ++d) {
      if (s_.dims[d].kind != DimKind::kParam || cc[d] == s_.dims[d].default_index) continue;
      Config off = cc;
      off[d] = s_.dims[d].default_index;
      if (!s_.valid(off)) continue;
      ++built;
      ablations_.push_back(measured(candidate_from_config(s_, *in_.registry, off, in_.source, text_, "ablation"),
                                    look_up(*in_.table, off), iteration));
    }
    return built;
  }

  std::vector<MethodVerdict> verdicts_;
  std::vector<Measurement> ablations_;
  const ReplayInput& in_;
  const SearchSpace& s_;
  const ReplayOptions& o_;
  std::string text_;
  double target_ms_;
  std::vector<Measurement> history_;
};

// Nearest rank: the smallest value with at least q of the runs at or below it; nullopt = "not reached".
std::optional<int> nearest_rank(const std::vector<std::optional<int>>& sorted, double q) {
  if (sorted.empty()) return std::nullopt;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

Result<ReplayResult> replay_search(const ReplayInput& in) {
  if (!in.space || !in.registry || !in.table) return internal_error("replay_search needs a space, a registry and a table");
  const auto& o = in.options;
  if (o.runs < 1 || o.iterations < 1 || o.branches < 1) return input_error("--runs, --iterations and --branches must be at least 1");
  if (!(o.within_pct >= 0) || !(o.target_share_pct > 0)) return input_error("--within must be >= 0 and --target-share > 0");
  for (const auto& d : in.space->dims)
    if (d.kind == DimKind::kFlag && !o.flag_methods_neutral)
      return internal_error("the replay's space must be built without compiler-flag methods, unless they are neutral");
  const SpaceTable& t = *in.table;
  auto best = t.best_ms();
  if (!best) return input_error("the table has no configuration measured ok");
  KOPT_TRY_ASSIGN(std::string text, util::read_file(in.source));
  Config base = in.space->default_config();
  auto b = t.ms.find(base);
  if (b == t.ms.end() || !b->second)
    return input_error("the baseline " + in.space->key(base) + (b == t.ms.end() ? " is not in the table" : " failed in the table") +
                       ": kopt's loop would stop at its correctness gate");

  ReplayResult res;
  auto& s = res.summary;
  s.space_size = t.ms.size() + t.missing;
  s.measured_ok = t.ms.size() - t.failed();
  s.best_ms = *best;
  s.target_ms = *best * (1 + o.within_pct / 100);
  s.baseline_ms = *b->second;
  s.baseline_key = in.space->key(base);
  for (const auto& [c, ms] : t.ms) {
    if (ms && *ms == *best && s.best_key.empty()) s.best_key = in.space->key(c);
    if (ms && *ms <= s.target_ms) ++s.good;
  }
  s.target_evaluations = static_cast<int>(std::floor(o.target_share_pct / 100 * static_cast<double>(s.space_size) + 1e-9));
  s.random_mean_evaluations = random_mean_draws(s.space_size, s.good);
  s.random_within_target = random_hit_probability(s.space_size, s.good, s.target_evaluations);
  for (const auto& sug : o.suggested) {
    ReplaySuggested here{in.space->in_range(sug.config) ? in.space->key(sug.config) : std::string("(not a point of the space)"),
                         sug.reason};
    if (auto it = t.ms.find(sug.config); it != t.ms.end()) {
      here.in_table = true;
      here.ms = it->second;
      here.within_target = it->second && *it->second <= s.target_ms;
    }
    res.suggested.push_back(std::move(here));
  }

  Replayer rp(in, text, s.target_ms);
  std::vector<std::optional<int>> hits;
  for (int r = 0; r < o.runs; ++r) {
    KOPT_TRY_ASSIGN(auto run, rp.run(o.first_seed + static_cast<uint64_t>(r), r == 0 ? &res.notes : nullptr));
    hits.push_back(run.hit_evaluation);
    s.reached += run.hit_evaluation.has_value();
    s.reached_within_target += run.hit_evaluation && *run.hit_evaluation <= s.target_evaluations;
    s.reached_first_iteration += run.hit_iteration && *run.hit_iteration <= 1;
    res.runs.push_back(std::move(run));
  }
  std::sort(hits.begin(), hits.end(), [](const auto& x, const auto& y) {
    return x && y ? *x < *y : x.has_value() && !y.has_value();  // not reached sorts last
  });
  s.median = nearest_rank(hits, 0.5);
  s.p90 = nearest_rank(hits, 0.9);
  s.max = hits.back();
  return res;
}

std::string format_replay(const ReplayResult& r, const ReplayOptions& o) {
  const auto& s = r.summary;
  auto share = [&](double e) { return 100 * e / static_cast<double>(s.space_size); };
  auto evals = [&](const std::optional<int>& e) {
    return e ? fmt::format("{} ({:.1f}% of the space)", *e, share(*e)) : std::string("not reached");
  };
  std::string out;
  out += fmt::format("space: {} configurations, {} measured ok; true best {:.4f} ms ({}); baseline {:.4f} ms ({})\n",
                     s.space_size, s.measured_ok, s.best_ms, s.best_key, s.baseline_ms, s.baseline_key);
  out += fmt::format("target: within {:g}% of the best (<= {:.4f} ms): {} configuration(s)\n", o.within_pct, s.target_ms, s.good);
  out += fmt::format("policy {}: {}; {} candidates per iteration, at most {} iterations, patience {}\n", replay_policy_name(o.policy),
                     o.policy == ReplayPolicy::kLoop ? "kopt's built-in generator (method selection + parameter strategy)"
                                                     : "the parameter strategy alone, method guards searched like parameters",
                     o.branches, o.iterations, o.patience > 0 ? std::to_string(o.patience) : std::string("off"));
  if (o.policy == ReplayPolicy::kLoop) out += fmt::format("profile: {}; budget: a slot per offered method on every axis\n", o.metrics_source);
  for (const auto& n : r.notes) out += "  " + n + "\n";
  if (r.suggested.empty()) {
    out += "warm start: none (from scratch)\n";
  } else {
    out += fmt::format("warm start: {} point(s){}, measured first in every run (each an evaluation):\n", r.suggested.size(),
                       o.suggested_source.empty() ? std::string() : " from " + o.suggested_source);
    for (const auto& p : r.suggested)
      out += fmt::format("  {}  ({}); here: {}\n", p.key, p.reason,
                         !p.in_table ? std::string("not in the table")
                         : !p.ms     ? std::string("failed")
                                     : fmt::format("{:.4f} ms ({:+.1f}% of the best{})", *p.ms, 100 * (*p.ms / s.best_ms - 1),
                                                   p.within_target ? ", within the target" : ""));
  }
  out += fmt::format("{} runs (seeds {}..{}): evaluations until the first configuration within {:g}% (baseline = 1)\n", r.runs.size(),
                     o.first_seed, o.first_seed + r.runs.size() - 1, o.within_pct);
  out += fmt::format("  median {}\n  p90    {}\n  max    {}\n", evals(s.median), evals(s.p90), evals(s.max));
  if (r.runs.size() <= 20 || !r.suggested.empty()) {
    std::vector<std::string> per_run;
    for (const auto& run : r.runs)
      per_run.push_back(fmt::format("{}:{}{}", run.seed, run.hit_evaluation ? std::to_string(*run.hit_evaluation) : "-",
                                    run.hit_suggested ? "w" : ""));
    out += fmt::format("  per run (seed:evaluation{}): {}\n", r.suggested.empty() ? "" : "; w: a warm-start point",
                       util::join(per_run, " "));
  }
  out += fmt::format("  reached in {}/{} runs; within {:g}% of the space ({} evaluations) in {}/{}\n", s.reached, r.runs.size(),
                     o.target_share_pct, s.target_evaluations, s.reached_within_target, r.runs.size());
  out += fmt::format("  reached by the end of the first iteration (the baseline and one batch) in {}/{}\n",
                     s.reached_first_iteration, r.runs.size());
  int unknown = 0, ablations = 0, skipped = 0;
  for (const auto& run : r.runs)
    unknown += run.unknown, ablations += run.ablations, skipped += static_cast<int>(run.skipped.size());
  if (unknown) out += fmt::format("  {} candidate(s) were not in the table (counted as failed evaluations)\n", unknown);
  if (skipped)
    out += fmt::format(
        "  candidates built but not measured, predicted infeasible by the feasibility model after failures earlier in "
        "their batch (not counted): {:.1f} per run on average\n",
        static_cast<double>(skipped) / static_cast<double>(r.runs.size()));
  if (o.policy == ReplayPolicy::kLoop)
    out += fmt::format("  ablation builds the real loop would measure besides (not counted; {}): {:.1f} per run on average\n",
                       o.param_ablation ? "methods and parameters" : "methods only",
                       static_cast<double>(ablations) / static_cast<double>(r.runs.size()));
  out += fmt::format("random search (uniform, without replacement): mean {:.1f} evaluations ({:.1f}% of the space); "
                     "P(within {} evaluations) = {:.2f}\n",
                     s.random_mean_evaluations, share(s.random_mean_evaluations), s.target_evaluations, s.random_within_target);
  return out;
}

util::Json to_json(const ReplayResult& r, const ReplayOptions& o) {
  const auto& s = r.summary;
  auto opt = [](const std::optional<int>& v) { return v ? util::Json(*v) : util::Json(nullptr); };
  util::Json runs = util::Json::array();
  for (const auto& run : r.runs)
    runs.push_back({{"seed", run.seed},
                    {"hit_evaluation", opt(run.hit_evaluation)},
                    {"hit_iteration", opt(run.hit_iteration)},
                    {"evaluations", run.evaluations},
                    {"iterations", run.iterations},
                    {"unknown", run.unknown},
                    {"ablations", run.ablations},
                    {"skipped", run.skipped.size()},
                    {"best_found_ms", run.best_found_ms},
                    {"suggested_evaluated", run.suggested_evaluated},
                    {"hit_suggested", run.hit_suggested},
                    {"end", run.end}});
  util::Json warm = util::Json::array();
  for (const auto& p : r.suggested)
    warm.push_back({{"key", p.key}, {"reason", p.reason}, {"in_table", p.in_table},
                    {"ms", p.ms ? util::Json(*p.ms) : util::Json(nullptr)}, {"within_target", p.within_target}});
  return {{"options", {{"runs", o.runs}, {"iterations", o.iterations}, {"branches", o.branches}, {"within_pct", o.within_pct},
                       {"target_share_pct", o.target_share_pct}, {"patience", o.patience}, {"first_seed", o.first_seed},
                       {"policy", replay_policy_name(o.policy)}, {"metrics_source", o.metrics_source}, {"metrics", o.metrics},
                       {"flag_methods_neutral", o.flag_methods_neutral}, {"promote_ablations", o.promote_ablations},
                       {"param_ablation", o.param_ablation}}},
          {"summary", {{"space_size", s.space_size}, {"measured_ok", s.measured_ok}, {"good", s.good}, {"best_ms", s.best_ms},
                       {"best", s.best_key}, {"target_ms", s.target_ms}, {"baseline_ms", s.baseline_ms}, {"baseline", s.baseline_key},
                       {"target_evaluations", s.target_evaluations}, {"median_evaluations", opt(s.median)},
                       {"p90_evaluations", opt(s.p90)}, {"max_evaluations", opt(s.max)}, {"reached", s.reached},
                       {"reached_within_target", s.reached_within_target}, {"reached_first_iteration", s.reached_first_iteration},
                       {"random_mean_evaluations", s.random_mean_evaluations},
                       {"random_within_target", s.random_within_target}}},
          {"warm_start", {{"source", o.suggested_source}, {"points", warm}}},
          {"notes", r.notes},
          {"runs", runs}};
}

}  // namespace kopt::search
