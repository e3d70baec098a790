#include "report/decisions.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "report/run_data.h"

namespace kopt::report {

using util::Json;

namespace {

std::string text_of(const CandidateRow& c) {
  if (c.id == "baseline") return "baseline";
  std::vector<std::string> parts;
  for (const auto& [name, value] : c.params) parts.push_back(fmt::format("{}={}", name, value));
  std::vector<std::string> methods = c.methods;
  std::sort(methods.begin(), methods.end());
  for (const auto& m : methods) parts.push_back("+" + m);
  for (const auto& f : c.flags) parts.push_back(f);
  if (parts.empty()) return "(no parameters)";
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string set_text(const std::set<std::string>& s) {
  std::vector<std::string> v(s.begin(), s.end());
  return "{" + fmt::format("{}", fmt::join(v, "; ")) + "}";
}

std::set<std::string> minus(const std::set<std::string>& x, const std::set<std::string>& y) {
  std::set<std::string> out;
  std::set_difference(x.begin(), x.end(), y.begin(), y.end(), std::inserter(out, out.end()));
  return out;
}

template <typename T>
const T* find_at(const std::map<int, T>& m, int key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

}  // namespace

std::string configuration_text(const Json& candidate) {
  return text_of(candidate_rows(Json{{"candidates", Json::array({candidate})}}).front());
}

RunDecisions run_decisions(const Json& run) {
  RunDecisions d;
  std::map<std::string, std::string> text_by_id;
  for (const auto& c : candidate_rows(run)) {
    if (c.role == "ablation") continue;
    const std::string& text = text_by_id.emplace(c.id, text_of(c)).first->second;
    if (c.id != "baseline" && c.iteration && *c.iteration > 0) d.proposed[static_cast<int>(*c.iteration)].insert(text);
  }
  // The finalists' races (report/run_data.cpp puts selection.json's entry on the candidate's row): the iteration is
  // the one that raced it, the incumbent named by its configuration.
  for (const auto& c : run.value("candidates", Json::array())) {
    const Json sel = c.value("selection", Json());
    if (!sel.is_object() || sel.contains("error")) continue;
    auto me = text_by_id.find(c.value("id", std::string()));
    auto inc = text_by_id.find(sel.value("incumbent", std::string()));
    if (me == text_by_id.end()) continue;
    std::string reason = sel.value("reason", std::string());
    if (size_t cut = reason.find(" ["); cut != std::string::npos) reason.resize(cut);
    d.races[c.value("iteration", 0)][me->second] = fmt::format(
        "{} against {}: {}", sel.value("decision", std::string()) == "new_champion" ? "crowned" : "kept the incumbent",
        inc == text_by_id.end() ? sel.value("incumbent", std::string()) : inc->second, reason);
  }
  if (const Json* tl = run.contains("timeline") && run["timeline"].is_array() ? &run["timeline"] : nullptr)
    for (const auto& t : *tl) {
      const int it = t.value("iteration", -1);
      if (it <= 0) continue;
      const std::string id = t.value("champion_id", std::string());
      auto found = text_by_id.find(id);
      d.champion[it] = found == text_by_id.end() ? id : found->second;
    }
  for (const char* key : {"ablation", "param_ablation"}) {
    if (!run.contains(key) || !run[key].is_array()) continue;
    for (const auto& a : run[key]) {
      const int it = a.value("iteration", 0);
      if (a.contains("method"))
        d.verdicts[it].insert(fmt::format("method {}: {}", a.value("method", ""), a.value("verdict", "")));
      else
        d.verdicts[it].insert(fmt::format("param {}: {}", a.value("param", ""), a.value("effect", "")));
    }
  }
  const Json r = run.value("run", Json::object());
  d.stop_reason = r.value("stop_reason", std::string());
  d.iterations = r.value("iterations_done", 0);
  return d;
}

DecisionsDiff compare_decisions(const RunDecisions& a, const RunDecisions& b) {
  std::vector<std::string> diffs;
  std::optional<int> first;
  auto note = [&](int it, std::string what) {
    if (!first) first = it;
    diffs.push_back(std::move(what));
  };
  const int last = std::max({a.iterations, b.iterations, a.proposed.empty() ? 0 : a.proposed.rbegin()->first,
                             b.proposed.empty() ? 0 : b.proposed.rbegin()->first});
  static const std::set<std::string> kNone;
  static const std::string kNothing = "(none)";
  for (int it = 1; it <= last; ++it) {
    const auto* pa = find_at(a.proposed, it);
    const auto* pb = find_at(b.proposed, it);
    const auto& sa = pa ? *pa : kNone;
    const auto& sb = pb ? *pb : kNone;
    if (sa != sb)
      note(it, fmt::format("iteration {}: proposals: {} in A, {} in B; A only {}, B only {}", it, sa.size(), sb.size(),
                           set_text(minus(sa, sb)), set_text(minus(sb, sa))));
    const auto* ca = find_at(a.champion, it);
    const auto* cb = find_at(b.champion, it);
    if ((ca ? *ca : kNothing) != (cb ? *cb : kNothing)) {
      std::string line = fmt::format("iteration {}: champion: A {}, B {}", it, ca ? *ca : kNothing, cb ? *cb : kNothing);
      auto raced = [&](const RunDecisions& in, const std::string* champ) -> std::string {
        const auto* r = champ ? find_at(in.races, it) : nullptr;
        auto f = r ? r->find(*champ) : std::map<std::string, std::string>::const_iterator{};
        return r && f != r->end() ? f->second : "not raced there";
      };
      line += fmt::format("; in B, A's champion: {}; in A, B's champion: {}", raced(b, ca), raced(a, cb));
      note(it, std::move(line));
    }
    const auto* va = find_at(a.verdicts, it);
    const auto* vb = find_at(b.verdicts, it);
    if ((va ? *va : kNone) != (vb ? *vb : kNone))
      note(it, fmt::format("iteration {}: ablation verdicts: A {}, B {}", it, set_text(va ? *va : kNone),
                           set_text(vb ? *vb : kNone)));
  }
  if (a.iterations != b.iterations) note(last, fmt::format("iterations: A {}, B {}", a.iterations, b.iterations));
  if (a.stop_reason != b.stop_reason) note(last, fmt::format("stop: A {}, B {}", a.stop_reason, b.stop_reason));
  DecisionsDiff out;
  out.same = diffs.empty();
  if (first) out.first_difference = *first;
  out.iterations_a = a.iterations;
  out.iterations_b = b.iterations;
  out.differences = std::move(diffs);
  return out;
}

}  // namespace kopt::report
