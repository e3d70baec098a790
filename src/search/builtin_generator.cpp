#include "search/builtin_generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "search/feasibility.h"
#include "search/selection.h"
#include "search/strategy.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::search {

namespace {

std::set<std::string> picked_ids(const MethodSelection& selection) {
  std::set<std::string> picked;
  for (const auto& p : selection.picks) picked.insert(p.id);
  return picked;
}

// The value indices of a method dimension that switch it on (a valued flag has several).
std::vector<int> on_values(const Dim& dim) {
  std::vector<int> on;
  for (size_t v = 0; v < dim.values.size(); ++v)
    if (dim.values[v] != 0) on.push_back(static_cast<int>(v));
  return on;
}

// Per dimension, the value the first proposal takes: a picked method's first "on" value, else -1.
std::vector<int> preferred_values(const SearchSpace& space, const MethodSelection& selection) {
  const auto picked = picked_ids(selection);
  std::vector<int> prefer(space.dims.size(), -1);
  for (size_t d = 0; d < space.dims.size(); ++d) {
    const Dim& dim = space.dims[d];
    if (dim.kind == DimKind::kParam || !picked.count(dim.method)) continue;
    auto on = on_values(dim);
    if (!on.empty()) prefer[d] = on.front();  // a picked method is first tried on the incumbent
  }
  return prefer;
}

// The feasibility model's predictions over the space's unmeasured points with every compiler flag at its default
// (a flag never changes the prediction), for the record: at most kListed, enumerated only while the space is small.
std::vector<PredictedInfeasible> predicted_infeasible(const SearchSpace& space, const std::vector<Observation>& history,
                                                      std::vector<std::string>& notes) {
  constexpr double kEnumerated = 60000;
  constexpr size_t kListed = 500;
  std::vector<FeasibilityObservation> obs;
  bool signal = false;
  for (const auto& o : history) {
    obs.push_back({o.config, o.time_ms.has_value(), o.unwritten_fraction});
    signal = signal || o.unwritten_fraction.has_value();
  }
  if (!signal) return {};
  FeasibilityModel model(space, obs);
  for (const auto& line : model.describe(space)) notes.push_back("feasibility model: " + line);
  std::set<Config> measured;
  for (const auto& o : history) measured.insert(o.config);
  std::vector<size_t> free;
  double product = 1;
  for (size_t d = 0; d < space.dims.size(); ++d)
    if (space.dims[d].kind != DimKind::kFlag) free.push_back(d), product *= static_cast<double>(space.dims[d].values.size());
  std::vector<PredictedInfeasible> out;
  if (!model.active() || product > kEnumerated) return out;
  Config c = space.default_config();
  std::vector<size_t> pos(free.size(), 0);
  size_t count = 0;
  while (true) {
    for (size_t i = 0; i < free.size(); ++i) c[free[i]] = static_cast<int>(pos[i]);
    if (!measured.count(c) && space.valid(c))
      if (auto p = model.predict(c); p && ++count <= kListed) out.push_back({c, space.key(c), p->reason(space)});
    size_t i = 0;
    while (i < pos.size() && ++pos[i] == space.dims[free[i]].values.size()) pos[i++] = 0;
    if (i == pos.size()) break;
  }
  if (count)
    notes.push_back(fmt::format("feasibility model: {} unmeasured configuration(s) predicted infeasible, not proposed{}", count,
                                count > kListed ? fmt::format(" (the first {} recorded)", kListed) : std::string()));
  return out;
}

}  // namespace

std::vector<std::vector<int>> allowed_values(const SearchSpace& space, const std::optional<Candidate>& champion,
                                             const MethodSelection& selection, const std::vector<MethodVerdict>& verdicts) {
  const auto picked = picked_ids(selection);
  const std::set<std::string> explorable(selection.explorable.begin(), selection.explorable.end());
  // Verdicts come in order: the last one per method wins. A method stays on in the champion when it was
  // proven (effective) or when its ablation measured a significant saving that SASS could not confirm.
  std::map<std::string, bool> keep;
  for (const auto& v : verdicts)
    keep[v.method] = v.verdict == Verdict::kEffective || v.verdict == Verdict::kMeasuredEffective ||
                     (v.verdict == Verdict::kUnverified && v.measured_gain);  // states written before kMeasuredEffective
  std::vector<std::vector<int>> allowed(space.dims.size());
  for (size_t d = 0; d < space.dims.size(); ++d) {
    const Dim& dim = space.dims[d];
    const int n = static_cast<int>(dim.values.size());
    if (dim.kind == DimKind::kParam) {
      for (int v = 0; v < n; ++v) allowed[d].push_back(v);
      continue;
    }
    const bool champion_on = champion && champion->guards.count(dim.method) && champion->guards.at(dim.method);
    auto it = keep.find(dim.method);
    const bool proven = it != keep.end() && it->second;
    if (champion_on && proven) {
      allowed[d] = on_values(dim);
    } else if (picked.count(dim.method) || champion_on || (dim.kind == DimKind::kGuard && explorable.count(dim.method))) {
      // Free: a pick (tried first on the incumbent), a method on in the champion, or a guard the kernel declares
      // that the search may use on this device and in this numerics mode: the kernel's author offered it, and
      // the profile's silence is no evidence against it (docs/SEARCH.md). Compiler-flag methods need a pick.
      for (int v = 0; v < n; ++v) allowed[d].push_back(v);
    }
    if (allowed[d].empty()) allowed[d].push_back(dim.default_index);  // off (or the only value there is)
  }
  return allowed;
}

Candidate baseline_candidate(const SearchSpace& space, const Registry& reg, const std::filesystem::path& source,
                             const std::string& source_text) {
  Candidate c = candidate_from_config(space, reg, space.default_config(), source, source_text, "baseline");
  c.id = "baseline";
  return c;
}

Result<GeneratorOutput> BuiltinGenerator::generate(const GeneratorInput& in) {
  if (!in.registry || !in.space) return internal_error("the built-in generator needs a registry and a search space");
  const SearchSpace& space = *in.space;
  KOPT_TRY_ASSIGN(std::string source_text, util::read_file(in.baseline_source));

  GeneratorOutput out;
  SelectionInput sel = selection_input(in);
  for (const auto& d : space.dims)
    if (d.kind != DimKind::kParam && d.values.size() > 1) sel.offered.push_back(d.method);
  if (in.champion)
    for (const auto& [id, on] : in.champion->candidate.guards)
      if (on) sel.active.insert(id);
  out.selection = select_methods(sel);

  std::optional<Candidate> champion;
  if (in.champion) champion = in.champion->candidate;
  StrategyInput st;
  st.space = &space;
  st.allowed = allowed_values(space, champion, out.selection, in.verdicts);
  st.prefer = preferred_values(space, out.selection);
  // The ablations' variants are measurements like the candidates: the model learns from them, and none is proposed again.
  for (const auto* list : {&in.history, &in.ablations})
    for (const auto& m : *list) {
      if (!m.candidate.config || !space.in_range(*m.candidate.config)) continue;
      st.history.push_back({*m.candidate.config, m.status == CandidateStatus::kOk ? m.ranked_ms() : std::nullopt,
                            m.status == CandidateStatus::kOk ? std::nullopt : m.unwritten_fraction});
    }
  st.suggested = in.warm_start;
  st.k = in.k;
  st.seed = in.seed + static_cast<uint64_t>(in.iteration) * 1000003ull;
  // A method whose ablation proved it is pinned on; but the proof holds at the champion it was measured on, and a
  // method can pay there and cost elsewhere (with another method on: docs/SEARCH.md, "Pins"). So one candidate of
  // each batch (from K = 2) is chosen over the whole space, pins released, by the same model.
  const bool pinned = std::any_of(space.dims.begin(), space.dims.end(), [&](const Dim& d) {
    const auto& a = st.allowed[static_cast<size_t>(&d - space.dims.data())];
    return d.kind != DimKind::kParam && std::find(a.begin(), a.end(), d.default_index) == a.end();
  });
  const bool release_one = pinned && in.k >= 2;
  if (release_one) st.k = in.k - 1;
  auto proposals = propose_configs(st);
  // The whole space, every method free: where the search may still go once the evidence's picks are spent.
  StrategyInput whole = st;
  whole.k = in.k;
  whole.allowed.clear();
  whole.prefer.clear();
  whole.suggested.clear();  // led the batch above when they could
  if (release_one && !proposals.empty()) {
    StrategyInput released = whole;
    released.k = 1;
    for (const auto& p : proposals) released.exclude.push_back(p.config);
    for (auto& p : propose_configs(released)) {
      p.reason = "pins released: " + p.reason;
      proposals.push_back(std::move(p));
    }
  }
  if (proposals.empty()) {
    proposals = propose_configs(whole);
    out.exploring = !proposals.empty();
    if (!proposals.empty())
      out.notes.push_back("every configuration the evidence allows was measured: exploring the rest of the space "
                          "(methods the profile did not pick, and their parameters)");
  }
  out.outlook = space_outlook(whole);
  out.predicted_infeasible = predicted_infeasible(space, st.history, out.notes);

  std::set<std::string> measured;
  for (const auto* list : {&in.history, &in.ablations})
    for (const auto& m : *list) measured.insert(m.candidate.content_hash);
  if (!out.selection.picks.empty())
    out.notes.push_back("methods picked: " + util::join(out.selection.ids(), ", "));
  else
    out.notes.push_back("no method picked: the search varies parameters only");
  for (const auto& p : proposals) {
    Candidate c = candidate_from_config(space, *in.registry, p.config, in.baseline_source, source_text, "builtin");
    if (!measured.insert(c.content_hash).second) continue;  // identical build already measured
    c.id = fmt::format("i{}c{}", in.iteration, out.candidates.size() + 1);
    out.notes.push_back(fmt::format("{}: {} ({}{})", c.id, space.key(p.config), p.reason,
                                    p.predicted_ms ? fmt::format(", predicted {:.4g} ms", *p.predicted_ms) : ""));
    out.candidates.push_back(std::move(c));
  }
  if (out.candidates.empty()) out.notes.push_back("the search space is exhausted: every allowed configuration was measured");
  return out;
}

}  // namespace kopt::search
