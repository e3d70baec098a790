#include "report/summary.h"

#include "search/llm_usage.h"

#include <fmt/format.h>

#include <filesystem>

#include "util/fs.h"
#include "util/strings.h"

namespace kopt::report {

namespace {

std::string opt_text(const std::optional<std::string>& v) { return v ? *v : "n/a"; }
std::string opt_num(const std::optional<double>& v, const char* fmtstr = "{:.4f}") {
  return v ? fmt::format(fmt::runtime(fmtstr), *v) : "n/a";
}
template <class T>
std::string opt_scalar(const std::optional<T>& v) {
  return v ? util::Json(*v).dump() : "n/a";
}
std::string text_list(const std::vector<std::string>& v) { return v.empty() ? "—" : util::join(v, ", "); }
std::string dims_text(const std::optional<Dims>& d) {
  if (!d) return "n/a";
  std::string t;
  for (const auto& [k, v] : *d) t += (t.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return t;
}
// A table cell: '|' escaped.
std::string cell(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.insert(i, "\\");
  return s;
}

// summary.json "dispatch" (--dispatch; docs/GATES.md "The per-shape dispatch"): the buckets, per case the dispatch's
// time against the single champion's with the paired gain and its CI, the weighted gain; or why there is none.
std::string dispatch_section(const record::DispatchSection& d) {
  std::string md = "## Per-shape dispatch\n\n";
  if (!d.emitted) return md + "No dispatch: " + opt_text(d.reason) + "\n\n";
  const record::DispatchPlanRecord plan = d.plan.value_or(record::DispatchPlanRecord{});
  md += fmt::format("`champion/dispatch/`: {} configuration(s); the rule reads {} ({})\n\n", d.configs.size(),
                    text_list(plan.keys), opt_text(plan.rule));
  md += "| bucket | cases | configuration |\n| --- | --- | --- |\n";
  int b = 0;
  for (const auto& bucket : plan.buckets)
    md += fmt::format("| {} | {} | `{}` |\n", b++, text_list(bucket.cases), opt_text(bucket.config));
  md +=
      "\n| case | point | configuration | dispatch ms | champion ms | ratio (95% CI) | speedup |\n| --- | --- | --- | --- | --- "
      "| --- | --- |\n";
  for (const auto& c : d.cases) {
    std::string ci = c.ratio_ci95 && c.ratio_ci95->size() >= 2
                         ? fmt::format("{} [{:.3f}, {:.3f}]", opt_num(c.ratio, "{:.3f}"), (*c.ratio_ci95)[0], (*c.ratio_ci95)[1])
                         : "n/a (" + opt_text(c.status) + ")";
    md += fmt::format("| {} | {} | `{}` | {} | {} | {} | {} |\n", opt_text(c.case_name), dims_text(c.point), opt_text(c.config),
                      opt_num(c.dispatch_ms), opt_num(c.champion_ms), ci, opt_num(c.speedup, "{:.2f}x"));
  }
  const record::DispatchOverall o = d.overall.value_or(record::DispatchOverall{});
  if (o.valid)
    md += fmt::format(
        "\nOver the cases (weighted geometric mean of dispatch/champion ratios): {:.3f}, 95% CI [{:.3f}, {:.3f}] ({}; "
        "{:.2f}x)\n",
        o.geomean_ratio.value_or(0.0), o.ci95_low, o.ci95_high, opt_text(o.verdict), 1 / o.geomean_ratio.value_or(1.0));
  size_t held_out = 0;
  for (const auto& c : d.checks) held_out += c.kind == "holdout";
  md += fmt::format("\nCorrect at every case and at {} held-out shape(s).\n\n", held_out);
  return md;
}

std::string cases_section(const record::CaseTable& t) {
  std::string md =
      "## Cases (the workload matrix)\n\n| case | requested | realised | weight | baseline ms | champion ms | ratio | "
      "efficiency | note |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& c : *t.cases) {
    std::string eff = c.efficiency ? fmt::format("{:.1f}%", 100 * *c.efficiency) : "n/a";
    md += fmt::format("| {} | {} | {} | {:.2f} | {} | {} | {} | {} | {} |\n", opt_text(c.name), dims_text(c.requested),
                      dims_text(c.realised) + (c.fitted ? " (fitted)" : ""), c.weight, opt_num(c.baseline_ms),
                      opt_num(c.champion_ms), opt_num(c.ratio, "{:.3f}"), eff, opt_text(c.note));
  }
  if (t.geomean && t.geomean->ratio)
    md += fmt::format("\nWeighted geometric mean of the champion/baseline time ratios: {:.3f} ({:.2f}x) over {} case(s)\n",
                      *t.geomean->ratio, t.geomean->speedup.value_or(0.0), t.geomean->cases);
  if (t.dropped)
    for (const auto& d : *t.dropped) md += fmt::format("\n- {}", d);
  return md + (t.dropped ? "\n\n" : "\n");
}

std::string holdout_section(const record::HoldoutSection& hd) {
  std::string md = fmt::format(
      "## Held-out shapes (not used in the search)\n\n{} passed, {} outside the kernel's domain, {} "
      "where the champion fails, {} not run\n\n",
      hd.passed, hd.outside_domain, hd.champion_fails, hd.not_run);
  if (hd.cases)
    for (const auto& c : *hd.cases) md += fmt::format("- {}\n", opt_text(c.text));
  if (!hd.note.empty()) md += fmt::format("- note: {}\n", hd.note);
  return md + "\n";
}

// Each finalist's check of a gate, so a reader sees it ran (and on whom): "`id` verdict".
std::string checked_text(const std::vector<record::GateEntry>& entries, bool with_reason) {
  std::vector<std::string> checked;
  for (const auto& e : entries)
    checked.push_back(fmt::format("`{}` {}{}", opt_text(e.candidate), opt_text(e.verdict),
                                  !with_reason || e.verdict == "passed" ? "" : " (" + opt_text(e.reason) + ")"));
  return util::join(checked, ", ");
}

std::string safety_section(const record::GatesSection& g) {
  std::string md =
      fmt::format("## Safety gates\n\n- race_safe: **{}** (sanitizer: {})\n", opt_text(g.race_safe), opt_text(g.sanitize));
  if (const auto& b = g.baseline_sanitizer)
    md += fmt::format("- baseline sanitizer: race_safe {}{}\n", opt_text(b->race_safe),
                      b->rejected ? "; findings: " + opt_text(b->reason) : std::string());
  if (g.rejected)
    for (const auto& r : *g.rejected)
      md += fmt::format("- rejected `{}` ({}): {}\n", opt_text(r.candidate), opt_text(r.gate), opt_text(r.reason));
  if (g.flagged)
    for (const auto& f : *g.flagged)
      md += fmt::format("- regression flagged for `{}`{}: {}\n", opt_text(f.candidate),
                        f.rejected ? " (rejected: --no-regressions)" : "", text_list(f.regressions));
  if (g.determinism) {
    // Every finalist's check, so a reader sees it ran (and on whom); the nondeterministic ones with the reason.
    for (const auto& d : *g.determinism)
      if (d.verdict == "nondeterministic")
        md += fmt::format("- `{}` is nondeterministic: {}\n", opt_text(d.candidate), opt_text(d.reason));
    if (!g.determinism->empty())
      md += fmt::format("- determinism (two runs on the same inputs): {}\n", checked_text(*g.determinism, false));
  }
  if (g.champion_verified) {
    const std::string what = g.sanitize == "off" ? "determinism check (the sanitizer is off)" : "determinism check and sanitizer";
    if (*g.champion_verified)
      md += fmt::format("- the champion's {}: passed ({})\n", what,
                        g.champion_gates == "each" ? "before it became champion" : "on the final champion");
    else
      md += fmt::format("- **the champion's {}: not run** (the run ended before them; `--resume` runs them)\n", what);
  }
  if (g.ephemeral_seed)  // docs/GATES.md "The ephemeral seed": made at the end, never written
    md += fmt::format("- the ephemeral seed (made after the search, never written to any file): {}\n",
                      checked_text(*g.ephemeral_seed, true));
  if (g.final_verification)
    for (const auto& v : *g.final_verification)
      if (v.verdict == "rejected")
        md += fmt::format("- final verification: `{}` rejected ({}); fell back to `{}`\n", opt_text(v.candidate),
                          opt_text(v.reason), opt_text(v.fallback));
  return md + "\n";
}
}  // namespace

// Issue 18's sections: the cases (requested vs realised), the held-out shapes, the safety gates.
std::string render_gates_markdown(const record::SummarySections& s) {
  std::string md;
  if (s.cases && s.cases->cases) md += cases_section(*s.cases);
  if (s.holdout) md += holdout_section(*s.holdout);
  if (s.dispatch) md += dispatch_section(*s.dispatch);
  if (s.gates) md += safety_section(*s.gates);
  return md;
}

namespace {
std::string render_derived_markdown(const record::DerivedSection& d) {
  std::string md = fmt::format(
      "\n## Derived search space\n\nThe kernel has no `@kopt` lines: kopt derived these parameters "
      "from its code and searched them through an annotated copy (`{}`; `kopt annotate` prints the "
      "same).\n\n| parameter | values | default | why |\n| --- | --- | --- | --- |\n",
      opt_text(d.copy));
  for (const auto& p : d.params) {
    std::vector<std::string> v;
    for (const auto& x : p.values) v.push_back(std::to_string(x));
    md += fmt::format("| `{}` | {} | {} | {} |\n", opt_text(p.name), util::join(v, ", "), p.default_value,
                      cell(opt_text(p.reason)));
  }
  for (const auto& m : d.methods)
    md += fmt::format("| method `{}` | 0, 1 | 0 | {} |\n", opt_text(m.id), cell(opt_text(m.reason)));
  if (!d.constraints.empty()) {
    md += "\n| constraint | why |\n| --- | --- |\n";
    for (const auto& c : d.constraints) md += fmt::format("| `{}` | {} |\n", cell(opt_text(c.expr)), cell(opt_text(c.reason)));
  }
  for (const auto& n : d.notes) md += "- note: " + n + "\n";
  md += fmt::format("\n### Pruned points ({})\n\n", d.pruned.size());
  if (d.pruned.empty())
    md += "None: every measured point built and was correct.\n";
  else md += "| candidate | point | status | why |\n| --- | --- | --- | --- |\n";
  for (const auto& p : d.pruned)
    md += fmt::format("| `{}` | `{}` | {} | {} |\n", opt_text(p.candidate), cell(opt_text(p.point)), opt_text(p.status),
                      cell(opt_text(p.why)));
  return md;
}

std::string param_ablations_section(const std::vector<record::ParamAblationRecord>& params) {
  std::string md =
      "\n## Parameters (each change reverted alone to the baseline's value)\n\n| iteration | champion | parameter | "
      "champion's value | baseline's value | effect | saved ms (95% CI) |\n| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& p : params) {
    std::string saved = "—";
    if (p.saved_ms)
      saved = fmt::format("{:+.4f} [{:+.4f}, {:+.4f}]", p.saved_ms->median, p.saved_ms->ci95_low, p.saved_ms->ci95_high);
    else if (!p.note.value_or("").empty())
      saved = *p.note;
    md += fmt::format("| {} | `{}` | {} | {} | {} | {} | {} |\n", opt_scalar(p.iteration), opt_text(p.champion_id),
                      opt_text(p.param), opt_scalar(p.champion_value), opt_scalar(p.baseline_value), opt_text(p.effect), saved);
  }
  return md;
}

std::string costs_section(const record::CandidateCosts& c) {
  std::string md = fmt::format(
      "\n## Per-candidate cost ({} measured)\n\n| wall ms | compile | SASS | measure (compile excluded) | "
      "other cases | measure, all cases |\n| --- | --- | --- | --- | --- | --- |\n",
      c.candidates);
  for (const auto& [row, split] : {std::pair{"median", c.median_ms}, std::pair{"p90", c.p90_ms}}) {
    const record::CostSplit x = split.value_or(record::CostSplit{});
    md += fmt::format("| {} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:.0f} |\n", row, x.compile, x.sass, x.measure, x.cases,
                      x.measure_all_cases.value_or(x.measure));
  }
  return md;
}

// Issue 39 item 2: what the results database stood for, and what was raced again before it could be crowned.
std::string reuse_section(const record::ReuseSection& ru) {
  const auto& again = ru.raced_again;
  std::string md = fmt::format(
      "\n## Reused from the results database\n\n{} of {} evaluations were not measured: a record of the "
      "same configuration under the same key stood for each (docs/DATABASE.md \"Reuse\"; `--remeasure` "
      "measures them). {} reused finalist(s) that could be crowned were raced again in this run{}.\n\n"
      "| candidate | iteration | status | median ms (stored) | reused from |\n| --- | --- | --- | --- | --- |\n",
      ru.reused, ru.evaluations, again.size(), again.empty() ? "" : ": " + text_list(again));
  for (const auto& e : ru.records)
    md += fmt::format("| `{}`{} | {} | {} | {} | reused from run {} at {} (record {}) |\n", opt_text(e.id),
                      e.ablation ? " (ablation)" : "", opt_scalar(e.iteration), opt_text(e.status), opt_num(e.median_ms),
                      opt_text(e.run_dir), opt_text(e.recorded_at), opt_scalar(e.record_id));
  return md;
}

// Issue 39 item 2(b): the configurations of other shapes that led the first design, each measured here.
std::string warm_start_section(const record::WarmStartSection& w) {
  std::string md =
      "\n## Warm start from other shapes\n\nThe first design began with the fastest configurations the results "
      "database held of this kernel at the nearest other shapes on this GPU model (docs/DATABASE.md \"Warm "
      "start\"); each was measured in this run like any candidate.\n\n"
      "| configuration | from dims | rank there | median ms there | candidate | median ms here |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  for (const auto& e : w.points)
    md += fmt::format("| `{}` | {} | {} | {} (record {}) | {} | {} |\n", opt_text(e.key), dims_text(e.from_dims),
                      opt_scalar(e.rank), opt_num(e.median_ms), opt_scalar(e.record_id),
                      e.candidate_id.value_or("").empty() ? "not proposed" : "`" + *e.candidate_id + "`",
                      e.median_ms_here ? opt_num(e.median_ms_here) : (e.status_here ? *e.status_here : "not measured"));
  return md;
}

// Several measuring slots (issue 21): what each GPU did, and how busy it was over the measuring phases' wall.
std::string measuring_section(const record::MeasuringSection& ms) {
  const double wall = ms.wall_s;
  std::string md = fmt::format(
      "\n## Measuring\n\n{} slots, candidates handed to whichever was free; every race runs whole on one "
      "GPU. Utilisation is a slot's busy time over the measuring phases' wall time ({:.1f} s).\n\n"
      "| slot | candidates (attempts) | worker lost | busy s | utilisation |\n| --- | --- | --- | --- | --- |\n",
      ms.per_slot.size(), wall);
  for (const auto& p : ms.per_slot)
    md += fmt::format("| {} | {} | {} | {:.1f} | {:.0f}% |\n", opt_text(p.name), p.runs, p.lost, p.busy_s,
                      wall > 0 ? 100.0 * p.busy_s / wall : 0.0);
  if (!ms.retried.empty()) {
    int lost = 0;
    for (const auto& rt : ms.retried) lost += rt.lost ? 1 : 0;
    md += fmt::format(
        "\n{} candidate(s) lost their worker and were measured again on another GPU; {} lost it there too "
        "(reported with that verdict).\n",
        ms.retried.size(), lost);
  }
  return md;
}
}  // namespace

std::string render_markdown(const util::Json& s) { return render_markdown(record::summary_record_from_json(s)); }

namespace {
// The run, the headline, the gates' sections, the roofline, the timeline and the methods.
std::string head_markdown(const record::SummaryRecord& rec) {
  const record::SummarySections& s = rec.typed;
  std::string md = "# kopt run summary\n\n";
  md += fmt::format("- kernel: `{}`\n- dims: {}\n- GPU: {}\n- numerics mode: {}\n- generator: {}\n", opt_text(rec.kernel),
                    opt_text(rec.dims), rec.sections.count("meta") ? opt_text(rec.meta_gpu) : "n/a", opt_text(rec.numerics_mode),
                    opt_text(rec.generator));
  if (rec.sizes_guessed.value_or(false)) md += "- **buffer sizes were guessed** (no setup() or shapes in ref.py)\n";
  if (rec.stop_reason == record::StopReason::kNone)  // an interrupted run writes its summary before any stop reason exists
    md += "- stopped: **not finished** — interrupted; `kopt optimize --resume RUN_DIR` continues it\n";
  else
    md += fmt::format("- stopped: **{}** — {}\n", rec.stop_reason ? std::string(record::stop_reason_text(*rec.stop_reason)) : "n/a",
                      opt_text(rec.stop_detail));
  if (!rec.gates_passed.value_or(true))
    md += "- **not a measured run**: it stopped at a gate before any candidate, so there is no champion; the gate's "
          "report is in stop.json (and env.json)\n";
  md += "\n";

  if (const auto& t = s.timed_at)
    md += fmt::format("- timed at: case {} ({}; requested {}): {}\n\n", opt_text(t->case_name), dims_text(t->realised),
                      dims_text(t->requested), opt_text(t->note));
  md += "## Headline\n\n| | median ms | speedup |\n| --- | --- | --- |\n";
  const record::Headline h = rec.headline.value_or(record::Headline{});
  md += fmt::format("| baseline | {} | 1.00x |\n", opt_num(h.baseline_ms));
  md += fmt::format("| champion (`{}`) | {} | {} vs baseline |\n", opt_text(h.champion_id), opt_num(h.champion_ms),
                    opt_num(h.speedup_vs_baseline, "{:.2f}x"));
  md += fmt::format("| reference (ref.py) | {} | {} vs reference |\n\n", opt_num(h.reference_ms),
                    opt_num(h.speedup_vs_reference, "{:.2f}x"));

  if (h.warning) md += fmt::format("**WARNING: {}**\n\n", *h.warning);
  md += render_gates_markdown(s);

  const record::RooflineSummary r = rec.roofline.value_or(record::RooflineSummary{});
  md += "## Roofline\n\n";
  if (r.empty()) {
    md += "n/a\n\n";
  } else {
    md += fmt::format("- mode: {}\n- floor: {} ms ({}-bound)\n- efficiency: {}\n- near peak: {}\n\n", opt_text(r.mode),
                      opt_num(r.floor_ms), opt_text(r.bound), r.efficiency ? fmt::format("{:.1f}%", 100 * *r.efficiency) : std::string("n/a"),
                      opt_scalar(r.near_peak));
  }

  md += "## Timeline\n\n| iteration | champion | median ms | improved | candidates | correct | note |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n";
  if (rec.timeline)
    for (const auto& t : *rec.timeline)
      md += fmt::format("| {} | `{}` | {} | {} | {} | {} | {} |\n", opt_scalar(t.iteration), opt_text(t.champion_id),
                        opt_num(t.champion_ms), opt_scalar(t.improved), opt_scalar(t.candidates), opt_scalar(t.correct),
                        opt_text(t.note));

  md += "\n## Methods\n\n| verdict | methods |\n| --- | --- |\n";
  const auto methods = rec.methods.value_or(std::map<std::string, std::vector<std::string>>{});
  for (const char* k : {"effective", "effective_measured", "ineffective", "implementation_failed", "unverified", "not_ablatable"})
    md += fmt::format("| {} | {} |\n", k, methods.count(k) ? text_list(methods.at(k)) : "—");
  return md;
}
}  // namespace

std::string render_markdown(const record::SummaryRecord& rec) {
  const record::SummarySections& s = rec.typed;
  std::string md = head_markdown(rec);
  if (s.param_ablations && !s.param_ablations->empty()) md += param_ablations_section(*s.param_ablations);

  md += "\n## Frontier (runners-up)\n\n| candidate | median ms | methods |\n| --- | --- | --- |\n";
  if (rec.frontier)
    for (const auto& f : *rec.frontier)
      md += fmt::format("| `{}` | {} | {} |\n", opt_text(f.id), opt_num(f.median_ms), f.methods ? text_list(*f.methods) : "—");

  if (s.candidate_costs && s.candidate_costs->candidates > 0) md += costs_section(*s.candidate_costs);
  if (s.reuse && s.reuse->reused > 0) md += reuse_section(*s.reuse);
  if (s.warm_start && !s.warm_start->points.empty()) md += warm_start_section(*s.warm_start);
  if (s.measuring && s.measuring->per_slot.size() > 1) md += measuring_section(*s.measuring);
  if (s.derived) md += render_derived_markdown(*s.derived);
  // The language model's usage: search/llm_usage.h's own record, which renders itself.
  if (auto llm = rec.sections.find("llm"); llm != rec.sections.end() && !llm->second.is_null())
    md += search::render_llm_usage_markdown(llm->second);
  md += "\n## Where the time went\n\n";
  if (rec.wall) {
    auto at = [](const std::optional<double>& v) { return v ? fmt::format("{:.1f} s", *v) : std::string("never"); };
    md += fmt::format(
        "Whole wall {:.1f} s; the gates passed at {}; the first candidate measured at {}; the final champion "
        "found at {} (seconds from the loop's start; a resumed run counts its earlier parts).\n\n",
        rec.wall->whole_s, at(rec.wall->gates_s), at(rec.wall->first_candidate_s), at(rec.wall->champion_s));
  }
  md += "| phase | seconds |\n| --- | --- |\n";
  if (rec.phase_seconds)
    for (const auto& [phase, seconds] : *rec.phase_seconds) md += fmt::format("| {} | {:.1f} |\n", phase, seconds);
  if (rec.champion_path) {
    // A link relative to the run directory (summary.md sits in it): it works wherever the directory is copied.
    const std::string rel = (std::filesystem::path("champion") / std::filesystem::path(*rec.champion_path).filename()).generic_string();
    md += fmt::format("\nChampion source: [{}]({}) in the run directory{}\n", rel, rel, rec.run_dir ? " `" + *rec.run_dir + "`" : std::string());
  }
  else
    md += "\nChampion source: none (no champion was written)\n";
  return md;
}

Result<std::string> rerender(const std::string& run_dir) {
  std::filesystem::path dir(run_dir);
  KOPT_TRY_ASSIGN(util::Json j, util::read_json(dir / "summary.json"));
  if (record::summary_schema(j) != kSummarySchema)
    return input_error((dir / "summary.json").string() + " is not a kopt summary (schema " + kSummarySchema + ")");
  KOPT_TRY_ASSIGN(record::SummaryRecord s, record::parse_file<record::SummaryRecord>(j, (dir / "summary.json").string(),
                                                                                      record::summary_record_from_json));
  std::string md = render_markdown(s);
  KOPT_TRY(util::write_file_atomic(dir / "summary.md", md));
  return md;
}

}  // namespace kopt::report
