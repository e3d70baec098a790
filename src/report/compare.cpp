#include "report/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "record/fields.h"
#include "record/run_record.h"
#include "report/decisions.h"
#include "report/run_data.h"
#include "runner/stats.h"
#include "util/output.h"

namespace kopt::report {

using util::Json;

namespace {

// The comparison as a record (record/fields.h): compare_runs writes it, compare_csv and format_compare read it.
struct Side {
  double median_ms = 0;
  std::optional<double> ci95_low_ms, ci95_high_ms;
  std::optional<int64_t> samples;
  bool operator==(const Side&) const = default;
};
KOPT_RECORD_FIELDS(Side, median_ms, ci95_low_ms, ci95_high_ms, samples)
[[maybe_unused]] bool null_when_absent(const Side&) { return true; }

struct Ratio {  // runner::compare_paired's, over the two runs' samples
  double median_ratio = 0, ci95_low = 0, ci95_high = 0;
  int rounds = 0;
  std::string verdict;
  bool operator==(const Ratio&) const = default;
};
KOPT_RECORD_FIELDS(Ratio, median_ratio, ci95_low, ci95_high, rounds, verdict)

struct Row {
  std::string what, id_a, id_b;
  Side a, b;
  std::optional<Ratio> ratio;  // null: too few samples for a CI
  double ratio_of_medians = 0;
  bool operator==(const Row&) const = default;
};
KOPT_RECORD_FIELDS(Row, what, id_a, id_b, a, b, ratio, ratio_of_medians)
[[maybe_unused]] bool null_when_absent(const Row&) { return true; }

struct Facts {
  std::string dir, kernel, dims, gpu, champion_id;
  bool operator==(const Facts&) const = default;
};
KOPT_RECORD_FIELDS(Facts, dir, kernel, dims, gpu, champion_id)

struct Comparison {
  Facts a, b;
  std::vector<Row> rows;
  std::vector<std::string> notes;
  DecisionsDiff decisions;  // what each run chose, by configuration (report/decisions.h)
  bool operator==(const Comparison&) const = default;
};
KOPT_RECORD_FIELDS(Comparison, a, b, rows, notes, decisions)

Side side(const CandidateRow& c) { return {*c.median_ms, c.ci95_low_ms, c.ci95_high_ms, c.samples}; }

Row row(const std::string& what, const CandidateRow& ca, const CandidateRow& cb) {
  Row r{what, ca.id, cb.id, side(ca), side(cb), std::nullopt, *cb.median_ms / *ca.median_ms};
  const std::vector<double> sa = ca.samples_ms.value_or(std::vector<double>{}), sb = cb.samples_ms.value_or(std::vector<double>{});
  if (std::min(sa.size(), sb.size()) >= 5) {
    auto p = runner::compare_paired(sa, sb);
    r.ratio = Ratio{p.median_ratio, p.ci95_low, p.ci95_high, static_cast<int>(p.rounds), std::string(runner::describe(p.verdict))};
  }
  return r;
}

const CandidateRow* find_role(const std::vector<CandidateRow>& rows, const std::string& role) {
  for (const auto& c : rows)
    if (c.role == role && c.measured_ok()) return &c;
  return nullptr;
}

Facts facts(const RunFacts& f) { return {f.dir, f.kernel, f.dims_text, f.gpu, f.champion_id}; }

std::string fmt_side(const Side& s) {
  std::string v = fmt::format("{:.4f}", s.median_ms);
  if (s.ci95_low_ms && s.ci95_high_ms) v += fmt::format(" [{:.4f}, {:.4f}]", *s.ci95_low_ms, *s.ci95_high_ms);
  return v;
}

std::string num(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : std::string(); }

}  // namespace

util::Json compare_runs(const util::Json& a, const util::Json& b) {
  const std::vector<CandidateRow> rows_a = candidate_rows(a), rows_b = candidate_rows(b);
  Comparison cmp{facts(run_facts(a)), facts(run_facts(b)), {}, {}, compare_decisions(run_decisions(a), run_decisions(b))};
  std::set<std::pair<std::string, std::string>> shown;  // (id_a, id_b) already in a row
  for (const char* role : {"baseline", "champion"}) {
    const CandidateRow *ca = find_role(rows_a, role), *cb = find_role(rows_b, role);
    if (ca && cb) {
      cmp.rows.push_back(row(role, *ca, *cb));
      shown.insert({ca->id, cb->id});
    }
    else cmp.notes.push_back(fmt::format("no measured {} in {}", role, !ca ? "A" : "B"));
  }
  if (cmp.a.kernel != cmp.b.kernel) cmp.notes.push_back("the runs are of different kernel files");
  if (cmp.a.dims != cmp.b.dims) cmp.notes.push_back("the runs have different dims: times are of different workloads");
  // A run can measure one configuration more than once (an ablation variant equal to an earlier candidate): B's
  // measurement with the same id is preferred, else its first.
  std::map<std::string, std::vector<const CandidateRow*>> in_b;
  for (const auto& c : rows_b)
    if (c.measured_ok() && !c.content_hash.empty()) in_b[c.content_hash].push_back(&c);
  std::vector<Row> same;
  for (const auto& c : rows_a) {
    if (!c.measured_ok() || c.content_hash.empty()) continue;
    auto it = in_b.find(c.content_hash);
    if (it == in_b.end()) continue;
    const CandidateRow* match = it->second.front();
    for (const CandidateRow* m : it->second)
      if (m->id == c.id) match = m;
    if (!shown.count({c.id, match->id})) same.push_back(row("same_configuration", c, *match));
  }
  std::sort(same.begin(), same.end(), [](const Row& x, const Row& y) { return x.a.median_ms < y.a.median_ms; });
  for (auto& r : same) cmp.rows.push_back(std::move(r));
  return record::write_record(cmp);
}

std::string compare_csv(const Json& j) {
  const auto cmp = record::read_record<Comparison>(j);
  std::string s = "what,id_a,id_b,a_median_ms,a_ci95_low_ms,a_ci95_high_ms,b_median_ms,b_ci95_low_ms,b_ci95_high_ms,"
                  "ratio,ratio_ci95_low,ratio_ci95_high,rounds,verdict\r\n";
  for (const auto& r : cmp.rows) {
    const auto& ra = r.ratio;
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\r\n", util::csv_cell(r.what), util::csv_cell(r.id_a), util::csv_cell(r.id_b),
                     num(r.a.median_ms), num(r.a.ci95_low_ms), num(r.a.ci95_high_ms), num(r.b.median_ms), num(r.b.ci95_low_ms),
                     num(r.b.ci95_high_ms), num(ra ? ra->median_ratio : r.ratio_of_medians), ra ? num(ra->ci95_low) : "",
                     ra ? num(ra->ci95_high) : "", ra ? std::to_string(ra->rounds) : "", ra ? util::csv_cell(ra->verdict) : "");
  }
  return s;
}

std::string format_compare(const util::Json& j) {
  const auto cmp = record::read_record<Comparison>(j);
  std::string s;
  for (const auto* f : {&cmp.a, &cmp.b})
    s += fmt::format("{}: {}  ({}, {}, {})\n", f == &cmp.a ? "A" : "B", f->dir, f->kernel, f->dims, f->gpu);
  s += fmt::format("\n{:<19} {:<22} {:<30} {:<30} {}\n", "row", "A id / B id", "A median ms [95% CI]", "B median ms [95% CI]",
                   "B/A time ratio [95% CI], verdict");
  for (const auto& r : cmp.rows) {
    std::string ratio = r.ratio ? fmt::format("{:.3f} [{:.3f}, {:.3f}] over {} rounds, B {}", r.ratio->median_ratio, r.ratio->ci95_low,
                                              r.ratio->ci95_high, r.ratio->rounds, r.ratio->verdict)
                                : fmt::format("{:.3f} (ratio of medians; too few samples for a CI)", r.ratio_of_medians);
    s += fmt::format("{:<19} {:<22} {:<30} {:<30} {}\n", r.what, r.id_a + " / " + r.id_b, fmt_side(r.a), fmt_side(r.b), ratio);
  }
  if (cmp.rows.empty()) s += "(nothing measured correct in both runs)\n";
  for (const auto& n : cmp.notes) s += "note: " + n + "\n";
  const DecisionsDiff& d = cmp.decisions;
  if (d.same)
    s += fmt::format(
        "\ndecisions: the same (by configuration) in each of the {} iteration(s): proposals, champions, ablation "
        "verdicts and the stop\n",
        d.iterations_a);
  else {
    s += fmt::format("\ndecisions: differ, first at iteration {} (A {} iteration(s), B {}):\n", d.first_difference.value_or(0),
                     d.iterations_a, d.iterations_b);
    for (const auto& line : d.differences) s += "  " + line + "\n";
  }
  return s;
}

}  // namespace kopt::report
