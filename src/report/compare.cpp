#include "report/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "record/run_record.h"
#include "report/run_data.h"
#include "runner/stats.h"
#include "util/output.h"

namespace kopt::report {

using util::Json;

namespace {

Json opt_json(const std::optional<double>& v) { return v ? Json(*v) : Json(); }

Json side(const CandidateRow& c) {
  return {{"median_ms", *c.median_ms}, {"ci95_low_ms", opt_json(c.ci95_low_ms)}, {"ci95_high_ms", opt_json(c.ci95_high_ms)},
          {"samples", c.samples ? Json(*c.samples) : Json()}};
}

Json row(const std::string& what, const CandidateRow& ca, const CandidateRow& cb) {
  Json r = {{"what", what}, {"id_a", ca.id}, {"id_b", cb.id}, {"a", side(ca)}, {"b", side(cb)},
            {"ratio_of_medians", *cb.median_ms / *ca.median_ms}};
  const std::vector<double> sa = ca.samples_ms.value_or(std::vector<double>{}), sb = cb.samples_ms.value_or(std::vector<double>{});
  if (std::min(sa.size(), sb.size()) >= 5) {
    auto p = runner::compare_paired(sa, sb);
    r["ratio"] = {{"median_ratio", p.median_ratio}, {"ci95_low", p.ci95_low}, {"ci95_high", p.ci95_high},
                  {"rounds", p.rounds}, {"verdict", runner::describe(p.verdict)}};
  } else {
    r["ratio"] = nullptr;
  }
  return r;
}

const CandidateRow* find_role(const std::vector<CandidateRow>& rows, const std::string& role) {
  for (const auto& c : rows)
    if (c.role == role && c.measured_ok()) return &c;
  return nullptr;
}

Json facts(const RunFacts& f) {
  return {{"dir", f.dir}, {"kernel", f.kernel}, {"dims", f.dims_text}, {"gpu", f.gpu}, {"champion_id", f.champion_id}};
}

std::string fmt_side(const Json& s) {
  std::string v = fmt::format("{:.4f}", s["median_ms"].get<double>());
  if (s.value("ci95_low_ms", Json()).is_number() && s.value("ci95_high_ms", Json()).is_number())
    v += fmt::format(" [{:.4f}, {:.4f}]", s["ci95_low_ms"].get<double>(), s["ci95_high_ms"].get<double>());
  return v;
}

}  // namespace

util::Json compare_runs(const util::Json& a, const util::Json& b) {
  const std::vector<CandidateRow> rows_a = candidate_rows(a), rows_b = candidate_rows(b);
  const RunFacts fa = run_facts(a), fb = run_facts(b);
  Json rows = Json::array(), notes = Json::array();
  std::set<std::pair<std::string, std::string>> shown;  // (id_a, id_b) already in a row
  for (const char* role : {"baseline", "champion"}) {
    const CandidateRow *ca = find_role(rows_a, role), *cb = find_role(rows_b, role);
    if (ca && cb) {
      rows.push_back(row(role, *ca, *cb));
      shown.insert({ca->id, cb->id});
    }
    else notes.push_back(fmt::format("no measured {} in {}", role, !ca ? "A" : "B"));
  }
  if (fa.kernel != fb.kernel) notes.push_back("the runs are of different kernel files");
  if (fa.dims_text != fb.dims_text) notes.push_back("the runs have different dims: times are of different workloads");
  // A run can measure one configuration more than once (an ablation variant equal to an earlier candidate): B's
  // measurement with the same id is preferred, else its first.
  std::map<std::string, std::vector<const CandidateRow*>> in_b;
  for (const auto& c : rows_b)
    if (c.measured_ok() && !c.content_hash.empty()) in_b[c.content_hash].push_back(&c);
  std::vector<Json> same;
  for (const auto& c : rows_a) {
    if (!c.measured_ok() || c.content_hash.empty()) continue;
    auto it = in_b.find(c.content_hash);
    if (it == in_b.end()) continue;
    const CandidateRow* match = it->second.front();
    for (const CandidateRow* m : it->second)
      if (m->id == c.id) match = m;
    if (!shown.count({c.id, match->id})) same.push_back(row("same_configuration", c, *match));
  }
  std::sort(same.begin(), same.end(), [](const Json& x, const Json& y) { return x["a"]["median_ms"].get<double>() < y["a"]["median_ms"].get<double>(); });
  for (auto& r : same) rows.push_back(std::move(r));
  return {{"a", facts(fa)}, {"b", facts(fb)}, {"rows", rows}, {"notes", notes}};
}

std::string compare_csv(const Json& cmp) {
  auto num = [](const Json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? fmt::format("{:.6g}", j[key].get<double>()) : std::string();
  };
  std::string s = "what,id_a,id_b,a_median_ms,a_ci95_low_ms,a_ci95_high_ms,b_median_ms,b_ci95_low_ms,b_ci95_high_ms,"
                  "ratio,ratio_ci95_low,ratio_ci95_high,rounds,verdict\r\n";
  for (const auto& r : cmp.value("rows", Json::array())) {
    const Json& ra = r.value("ratio", Json());
    const bool ci = ra.is_object();
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\r\n", util::csv_cell(r.value("what", std::string())),
                     util::csv_cell(r.value("id_a", std::string())), util::csv_cell(r.value("id_b", std::string())),
                     num(r["a"], "median_ms"), num(r["a"], "ci95_low_ms"), num(r["a"], "ci95_high_ms"), num(r["b"], "median_ms"),
                     num(r["b"], "ci95_low_ms"), num(r["b"], "ci95_high_ms"), ci ? num(ra, "median_ratio") : num(r, "ratio_of_medians"),
                     ci ? num(ra, "ci95_low") : "", ci ? num(ra, "ci95_high") : "",
                     ci && ra.contains("rounds") ? std::to_string(ra["rounds"].get<int>()) : "",
                     ci ? util::csv_cell(ra.value("verdict", std::string())) : "");
  }
  return s;
}

std::string format_compare(const util::Json& cmp) {
  std::string s;
  for (const char* k : {"a", "b"}) {
    const Json& f = cmp[k];
    s += fmt::format("{}: {}  ({}, {}, {})\n", k[0] == 'a' ? "A" : "B", f.value("dir", std::string()), f.value("kernel", std::string()),
                     f.value("dims", std::string()), f.value("gpu", std::string()));
  }
  s += fmt::format("\n{:<19} {:<22} {:<30} {:<30} {}\n", "row", "A id / B id", "A median ms [95% CI]", "B median ms [95% CI]",
                   "B/A time ratio [95% CI], verdict");
  for (const auto& r : cmp["rows"]) {
    std::string ratio = r["ratio"].is_object()
                            ? fmt::format("{:.3f} [{:.3f}, {:.3f}] over {} rounds, B {}", r["ratio"]["median_ratio"].get<double>(),
                                          r["ratio"]["ci95_low"].get<double>(), r["ratio"]["ci95_high"].get<double>(),
                                          r["ratio"]["rounds"].get<int>(), r["ratio"]["verdict"].get<std::string>())
                            : fmt::format("{:.3f} (ratio of medians; too few samples for a CI)", r["ratio_of_medians"].get<double>());
    s += fmt::format("{:<19} {:<22} {:<30} {:<30} {}\n", r["what"].get<std::string>(),
                     r["id_a"].get<std::string>() + " / " + r["id_b"].get<std::string>(), fmt_side(r["a"]), fmt_side(r["b"]), ratio);
  }
  if (cmp["rows"].empty()) s += "(nothing measured correct in both runs)\n";
  for (const auto& n : cmp["notes"]) s += "note: " + n.get<std::string>() + "\n";
  return s;
}

}  // namespace kopt::report
