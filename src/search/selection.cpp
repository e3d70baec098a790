#include "search/selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "search/space.h"

namespace kopt::search {

std::vector<EvidenceHit> fired_evidence(const Method& m, const std::map<std::string, double>& metrics) {
  std::vector<EvidenceHit> hits;
  for (size_t i = 0; i < m.evidence.size(); ++i) {
    const auto& e = m.evidence[i];
    auto it = metrics.find(e.metric);
    if (it == metrics.end() || !std::isfinite(it->second) || !e.holds(it->second)) continue;
    double margin = std::fabs(it->second - e.value) / std::max(std::fabs(e.value), 1.0);
    hits.push_back({i, it->second, std::min(margin, 1.0)});
  }
  return hits;
}

double evidence_score(const std::vector<EvidenceHit>& hits) {
  double s = 0;
  for (const auto& h : hits) s += 1.0 + h.margin;
  return s;
}

std::string describe_hit(const Method& m, const EvidenceHit& hit) {
  const auto& e = m.evidence[hit.index];
  return fmt::format("{} = {:.4g} {} {:.4g}: {}", e.metric, hit.value, op_text(e.op), e.value, e.why);
}

namespace {

const MethodVerdict* latest_verdict(const std::vector<MethodVerdict>& verdicts, const std::string& id) {
  const MethodVerdict* best = nullptr;
  for (const auto& v : verdicts)
    if (v.method == id && (!best || v.iteration >= best->iteration)) best = &v;
  return best;
}

// Why `m` cannot run here at all, or "" when it can.
std::string unusable(const Method& m, const SelectionInput& in) {
  if (!m.supports(in.backend)) return fmt::format("does not apply to {} kernels", backend_name(in.backend));
  if (!method_fits_arch(m, in.arch)) return fmt::format("needs sm_{}, the device is sm_{}", m.min_arch, in.arch);
  if (!numerics_allows(in.numerics, m.numerics))
    return fmt::format("{} is not allowed in numerics mode {}", numerics_name(m.numerics), numerics_mode_name(in.numerics));
  return "";
}

// A method judged ineffective or failed is offered again only when some evidence fires now that did not
// fire when it was judged. Returns the reason to skip, or "".
std::string judged_out(const Method& m, const SelectionInput& in, const std::vector<EvidenceHit>& now) {
  const MethodVerdict* v = latest_verdict(in.verdicts, m.id);
  if (!v || (v->verdict != Verdict::kIneffective && v->verdict != Verdict::kImplementationFailed)) return "";
  std::set<size_t> then;
  for (const auto& h : fired_evidence(m, v->metrics)) then.insert(h.index);
  bool changed = !v->metrics.empty() && std::any_of(now.begin(), now.end(), [&](const EvidenceHit& h) { return !then.count(h.index); });
  if (changed) return "";
  return fmt::format("{} in iteration {} and the evidence has not changed since", verdict_name(v->verdict), v->iteration);
}

}  // namespace

SelectionInput selection_input(const GeneratorInput& in) {
  SelectionInput sel;
  sel.registry = in.registry;
  sel.plan = in.plan;
  sel.metrics = in.metrics;
  sel.verdicts = in.verdicts;
  sel.numerics = in.numerics;
  sel.backend = in.backend;
  sel.arch = in.arch;
  sel.bonus = in.method_bonus;
  return sel;
}

MethodSelection select_methods(const SelectionInput& in) {
  MethodSelection out;
  if (!in.registry) return out;
  const Registry& reg = *in.registry;
  std::set<std::string> offered(in.offered.begin(), in.offered.end());

  struct Eligible {
    const Method* m;
    std::vector<EvidenceHit> hits;
    double score;
  };
  std::vector<Eligible> eligible;
  for (const auto& id : offered) {
    const Method* m = reg.find(id);
    if (!m) {
      out.skipped.push_back({id, "not in the registry"});
      continue;
    }
    if (auto why = unusable(*m, in); !why.empty()) {
      out.skipped.push_back({id, why});
      continue;
    }
    auto hits = fired_evidence(*m, in.metrics);
    if (judged_out(*m, in, hits).empty()) out.explorable.push_back(id);
    if (in.active.count(id)) {
      out.skipped.push_back({id, "already on in the champion"});
      continue;
    }
    if (hits.empty()) {
      out.skipped.push_back({id, "no evidence for it in the current profile"});
      continue;
    }
    if (auto why = judged_out(*m, in, hits); !why.empty()) {
      out.skipped.push_back({id, why});
      continue;
    }
    eligible.push_back({m, std::move(hits), 0});
    eligible.back().score = evidence_score(eligible.back().hits);
    if (auto b = in.bonus.find(id); b != in.bonus.end() && std::isfinite(b->second))
      eligible.back().score += std::clamp(b->second, -kMaxMethodBonus, kMaxMethodBonus);
  }
  std::stable_sort(eligible.begin(), eligible.end(), [](const Eligible& a, const Eligible& b) {
    return a.score != b.score ? a.score > b.score : a.m->id < b.m->id;
  });

  std::map<Axis, int> left;
  for (Axis a : kAllAxes) left[a] = in.plan.slots.count(a) ? std::max(0, in.plan.slots.at(a)) : 0;
  std::set<std::string> chosen;
  auto on = [&](const std::string& id) { return in.active.count(id) || chosen.count(id); };
  // Why `m` cannot join the current picks, or "".
  auto clash = [&](const Method& m) -> std::string {
    for (const auto& other : in.active)
      if (reg.conflicts(m.id, other)) return fmt::format("conflicts with '{}', on in the champion", other);
    for (const auto& other : chosen)
      if (reg.conflicts(m.id, other)) return fmt::format("conflicts with '{}', picked with stronger evidence", other);
    for (const auto& other : in.active)
      if (const Method* o = reg.find(other); o && std::count(o->relations.subsumes.begin(), o->relations.subsumes.end(), m.id))
        return fmt::format("subsumed by '{}', on in the champion", other);
    for (const auto& other : chosen) {
      const Method* o = reg.find(other);
      if (o && std::count(o->relations.subsumes.begin(), o->relations.subsumes.end(), m.id))
        return fmt::format("subsumed by '{}', picked with stronger evidence", other);
      if (std::count(m.relations.subsumes.begin(), m.relations.subsumes.end(), other))
        return fmt::format("would make '{}', picked with stronger evidence, moot", other);
    }
    return "";
  };

  for (const auto& e : eligible) {
    const Method& m = *e.m;
    if (chosen.count(m.id)) continue;  // already added as a requirement
    if (left[m.axis] <= 0) {
      out.skipped.push_back({m.id, fmt::format("no {} slot left in this iteration's budget", axis_name(m.axis))});
      continue;
    }
    if (auto why = clash(m); !why.empty()) {
      out.skipped.push_back({m.id, why});
      continue;
    }
    // Requirements: on already, or offered and pickable now (taking a slot on their own axis). One the
    // kernel does not offer is assumed to be part of its structure.
    std::vector<const Method*> needed;
    std::string blocked;
    std::map<Axis, int> need_slots;
    need_slots[m.axis] = 1;
    for (const auto& rid : reg.requirements(m.id)) {
      if (on(rid) || !offered.count(rid)) continue;
      const Method* r = reg.find(rid);
      if (!r) continue;
      const MethodVerdict* v = latest_verdict(in.verdicts, rid);
      if (auto why = unusable(*r, in); !why.empty()) blocked = fmt::format("requires '{}', which {}", rid, why);
      else if (v && v->verdict == Verdict::kImplementationFailed) blocked = fmt::format("requires '{}', which failed in iteration {}", rid, v->iteration);
      else if (auto c = clash(*r); !c.empty()) blocked = fmt::format("requires '{}', which {}", rid, c);
      if (!blocked.empty()) break;
      needed.push_back(r);
      need_slots[r->axis]++;
    }
    for (const auto& [axis, n] : need_slots)
      if (blocked.empty() && left[axis] < n)
        blocked = fmt::format("it and its requirements need {} {} slot(s), {} left", n, axis_name(axis), left[axis]);
    if (!blocked.empty()) {
      out.skipped.push_back({m.id, blocked});
      continue;
    }
    MethodPick pick{m.id, m.axis, e.score, {}, ""};
    for (const auto& h : e.hits) pick.fired.push_back(describe_hit(m, h));
    if (auto b = in.bonus.find(m.id); b != in.bonus.end() && std::isfinite(b->second) && b->second != 0)
      pick.fired.push_back(fmt::format("strategy memory: {:+.2f} to the score (past runs at this roofline position)",
                                       std::clamp(b->second, -kMaxMethodBonus, kMaxMethodBonus)));
    out.picks.push_back(std::move(pick));
    chosen.insert(m.id);
    left[m.axis]--;
    for (const Method* r : needed) {
      MethodPick rp{r->id, r->axis, evidence_score(fired_evidence(*r, in.metrics)), {}, m.id};
      for (const auto& h : fired_evidence(*r, in.metrics)) rp.fired.push_back(describe_hit(*r, h));
      out.picks.push_back(std::move(rp));
      chosen.insert(r->id);
      left[r->axis]--;
    }
  }
  // A requirement picked late may have been skipped earlier for lack of slots; drop those stale skips.
  std::erase_if(out.skipped, [&](const MethodSkip& s) { return chosen.count(s.id) > 0; });
  return out;
}

}  // namespace kopt::search
