#include "report/summary.h"

#include "search/llm_usage.h"

#include <fmt/format.h>

#include <filesystem>

#include "util/fs.h"
#include "util/strings.h"

namespace kopt::report {

namespace {
std::string num(const util::Json& j, const char* key, const char* fmtstr = "{:.4f}") {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return "n/a";
  return fmt::format(fmt::runtime(fmtstr), j[key].get<double>());
}
std::string str(const util::Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "n/a";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}
std::string list(const util::Json& j) {
  if (!j.is_array() || j.empty()) return "—";
  std::string s;
  for (const auto& x : j) s += (s.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : x.dump());
  return s;
}
std::string dims_text(const util::Json& d) {
  if (!d.is_object()) return "n/a";
  std::string t;
  for (auto it = d.begin(); it != d.end(); ++it) t += (t.empty() ? "" : " ") + it.key() + "=" + it.value().dump();
  return t;
}
// summary.json "dispatch" (--dispatch; docs/GATES.md "The per-shape dispatch"): the buckets, per case the dispatch's
// time against the single champion's with the paired gain and its CI, the weighted gain; or why there is none.
std::string dispatch_section(const util::Json& d) {
  std::string md = "## Per-shape dispatch\n\n";
  if (!d.value("emitted", false)) return md + "No dispatch: " + str(d, "reason") + "\n\n";
  const util::Json plan = d.value("plan", util::Json::object());
  md += fmt::format("`champion/dispatch/`: {} configuration(s); the rule reads {} ({})\n\n",
                    d.value("configs", util::Json::array()).size(), list(plan.value("keys", util::Json::array())),
                    str(plan, "rule"));
  md += "| bucket | cases | configuration |\n| --- | --- | --- |\n";
  int b = 0;
  for (const auto& bucket : plan.value("buckets", util::Json::array()))
    md += fmt::format("| {} | {} | `{}` |\n", b++, list(bucket.value("cases", util::Json::array())), str(bucket, "config"));
  md +=
      "\n| case | point | configuration | dispatch ms | champion ms | ratio (95% CI) | speedup |\n| --- | --- | --- | --- | --- "
      "| --- | --- |\n";
  for (const auto& c : d.value("cases", util::Json::array())) {
    std::string ci = c.contains("ratio_ci95") ? fmt::format("{} [{:.3f}, {:.3f}]", num(c, "ratio", "{:.3f}"),
                                                            c["ratio_ci95"][0].get<double>(), c["ratio_ci95"][1].get<double>())
                                              : "n/a (" + str(c, "status") + ")";
    md += fmt::format("| {} | {} | `{}` | {} | {} | {} | {} |\n", str(c, "case"), dims_text(c.value("point", util::Json())),
                      str(c, "config"), num(c, "dispatch_ms"), num(c, "champion_ms"), ci, num(c, "speedup", "{:.2f}x"));
  }
  const util::Json o = d.value("overall", util::Json::object());
  if (o.value("valid", false))
    md += fmt::format(
        "\nOver the cases (weighted geometric mean of dispatch/champion ratios): {:.3f}, 95% CI [{:.3f}, {:.3f}] ({}; "
        "{:.2f}x)\n",
        o.value("geomean_ratio", 0.0), o.value("ci95_low", 0.0), o.value("ci95_high", 0.0), str(o, "verdict"),
        1 / o.value("geomean_ratio", 1.0));
  size_t held_out = 0;
  for (const auto& c : d.value("checks", util::Json::array())) held_out += c.value("kind", std::string()) == "holdout";
  md += fmt::format("\nCorrect at every case and at {} held-out shape(s).\n\n", held_out);
  return md;
}
}  // namespace

// Issue 18's sections: the cases (requested vs realised), the held-out shapes, the safety gates.
std::string render_gates_markdown(const util::Json& s) {
  std::string md;
  if (s.contains("cases") && s["cases"].contains("cases")) {
    md += "## Cases (the workload matrix)\n\n| case | requested | realised | weight | baseline ms | champion ms | ratio | "
          "efficiency | note |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const auto& c : s["cases"]["cases"]) {
      std::string eff = c.contains("efficiency") && c["efficiency"].is_number()
                            ? fmt::format("{:.1f}%", 100 * c["efficiency"].get<double>()) : "n/a";
      std::string ratio = c.contains("ratio") && c["ratio"].is_number() ? fmt::format("{:.3f}", c["ratio"].get<double>()) : "n/a";
      md += fmt::format("| {} | {} | {} | {:.2f} | {} | {} | {} | {} | {} |\n", str(c, "name"), dims_text(c.value("requested", util::Json())),
                        dims_text(c.value("realised", util::Json())) + (c.value("fitted", false) ? " (fitted)" : ""),
                        c.value("weight", 0.0), num(c, "baseline_ms"), num(c, "champion_ms"), ratio, eff, str(c, "note"));
    }
    const auto& g = s["cases"].value("geomean", util::Json::object());
    if (g.contains("ratio") && g["ratio"].is_number())
      md += fmt::format("\nWeighted geometric mean of the champion/baseline time ratios: {:.3f} ({:.2f}x) over {} case(s)\n",
                        g["ratio"].get<double>(), g.value("speedup", 0.0), g.value("cases", 0));
    md += "\n";
  }
  if (s.contains("holdout") && s["holdout"].is_object()) {
    const auto& hd = s["holdout"];
    md += fmt::format("## Held-out shapes (not used in the search)\n\n{} passed, {} outside the kernel's domain, {} where the "
                      "champion fails, {} not run\n\n", hd.value("passed", 0), hd.value("outside_domain", 0),
                      hd.value("champion_fails", 0), hd.value("not_run", 0));
    if (hd.contains("cases"))
      for (const auto& c : hd["cases"]) md += fmt::format("- {}\n", str(c, "text"));
    if (!hd.value("note", std::string()).empty()) md += fmt::format("- note: {}\n", str(hd, "note"));
    md += "\n";
  }
  if (s.contains("dispatch") && s["dispatch"].is_object()) md += dispatch_section(s["dispatch"]);
  if (s.contains("gates") && s["gates"].is_object()) {
    const auto& g = s["gates"];
    md += fmt::format("## Safety gates\n\n- race_safe: **{}** (sanitizer: {})\n", str(g, "race_safe"), str(g, "sanitize"));
    if (g.contains("baseline_sanitizer")) {
      const auto& b = g["baseline_sanitizer"];
      md += fmt::format("- baseline sanitizer: race_safe {}{}\n", str(b, "race_safe"),
                        b.value("rejected", false) ? "; findings: " + str(b, "reason") : std::string());
    }
    if (g.contains("rejected"))
      for (const auto& r : g["rejected"]) md += fmt::format("- rejected `{}` ({}): {}\n", str(r, "candidate"), str(r, "gate"), str(r, "reason"));
    if (g.contains("flagged"))
      for (const auto& f : g["flagged"])
        md += fmt::format("- regression flagged for `{}`{}: {}\n", str(f, "candidate"), f.value("rejected", false) ? " (rejected: --no-regressions)" : "",
                          list(f.value("regressions", util::Json::array())));
    if (g.contains("determinism")) {
      // Every finalist's check, so a reader sees it ran (and on whom); the nondeterministic ones with the reason.
      std::vector<std::string> checked;
      for (const auto& d : g["determinism"]) {
        checked.push_back(fmt::format("`{}` {}", str(d, "candidate"), str(d, "verdict")));
        if (d.value("verdict", std::string()) == "nondeterministic")
          md += fmt::format("- `{}` is nondeterministic: {}\n", str(d, "candidate"), str(d, "reason"));
      }
      if (!checked.empty()) md += fmt::format("- determinism (two runs on the same inputs): {}\n", util::join(checked, ", "));
    }
    if (g.contains("champion_verified")) {
      const std::string what = str(g, "sanitize") == "off" ? "determinism check (the sanitizer is off)" : "determinism check and sanitizer";
      if (g.value("champion_verified", false)) {
        md += fmt::format("- the champion's {}: passed ({})\n", what,
                          str(g, "champion_gates") == "each" ? "before it became champion" : "on the final champion");
      } else {
        md += fmt::format("- **the champion's {}: not run** (the run ended before them; `--resume` runs them)\n", what);
      }
    }
    if (g.contains("ephemeral_seed")) {  // docs/GATES.md "The ephemeral seed": made at the end, never written
      std::vector<std::string> checked;
      for (const auto& e : g["ephemeral_seed"])
        checked.push_back(fmt::format("`{}` {}{}", str(e, "candidate"), str(e, "verdict"),
                                      e.value("verdict", std::string()) == "passed" ? "" : " (" + str(e, "reason") + ")"));
      md +=
          fmt::format("- the ephemeral seed (made after the search, never written to any file): {}\n", util::join(checked, ", "));
    }
    if (g.contains("final_verification"))
      for (const auto& v : g["final_verification"])
        if (v.value("verdict", std::string()) == "rejected")
          md += fmt::format("- final verification: `{}` rejected ({}); fell back to `{}`\n", str(v, "candidate"), str(v, "reason"), str(v, "fallback"));
    md += "\n";
  }
  return md;
}

namespace {
// A table cell: '|' escaped.
std::string cell(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.insert(i, "\\");
  return s;
}

std::string render_derived_markdown(const util::Json& d) {
  std::string md = fmt::format("\n## Derived search space\n\nThe kernel has no `@kopt` lines: kopt derived these parameters "
                               "from its code and searched them through an annotated copy (`{}`; `kopt annotate` prints the "
                               "same).\n\n| parameter | values | default | why |\n| --- | --- | --- | --- |\n",
                               str(d, "copy"));
  for (const auto& p : d.value("params", util::Json::array())) {
    std::vector<std::string> v;
    for (const auto& x : p.value("values", util::Json::array())) v.push_back(x.dump());
    md += fmt::format("| `{}` | {} | {} | {} |\n", str(p, "name"), util::join(v, ", "), p.value("default", 0), cell(str(p, "reason")));
  }
  for (const auto& m : d.value("methods", util::Json::array()))
    md += fmt::format("| method `{}` | 0, 1 | 0 | {} |\n", str(m, "id"), cell(str(m, "reason")));
  const auto& cs = d.value("constraints", util::Json::array());
  if (!cs.empty()) {
    md += "\n| constraint | why |\n| --- | --- |\n";
    for (const auto& c : cs) md += fmt::format("| `{}` | {} |\n", cell(str(c, "expr")), cell(str(c, "reason")));
  }
  for (const auto& n : d.value("notes", util::Json::array())) md += "- note: " + n.get<std::string>() + "\n";
  const auto& pr = d.value("pruned", util::Json::array());
  md += fmt::format("\n### Pruned points ({})\n\n", pr.size());
  if (pr.empty()) md += "None: every measured point built and was correct.\n";
  else md += "| candidate | point | status | why |\n| --- | --- | --- | --- |\n";
  for (const auto& p : pr)
    md += fmt::format("| `{}` | `{}` | {} | {} |\n", str(p, "candidate"), cell(str(p, "point")), str(p, "status"), cell(str(p, "why")));
  return md;
}
}  // namespace

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
}  // namespace

std::string render_markdown(const util::Json& s) { return render_markdown(record::summary_record_from_json(s)); }

std::string render_markdown(const record::SummaryRecord& rec) {
  // The sections other modules own, as they wrote them (record/summary_record.h).
  util::Json s = util::Json::object();
  for (const auto& [k, v] : rec.sections) s[k] = v;
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

  if (s.contains("timed_at") && s["timed_at"].is_object())
    md += fmt::format("- timed at: case {} ({}; requested {}): {}\n\n", str(s["timed_at"], "case"),
                      dims_text(s["timed_at"].value("realised", util::Json())), dims_text(s["timed_at"].value("requested", util::Json())),
                      str(s["timed_at"], "note"));
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

  if (s.contains("param_ablations") && s["param_ablations"].is_array() && !s["param_ablations"].empty()) {
    md += "\n## Parameters (each change reverted alone to the baseline's value)\n\n| iteration | champion | parameter | champion's "
          "value | baseline's value | effect | saved ms (95% CI) |\n| --- | --- | --- | --- | --- | --- | --- |\n";
    for (const auto& p : s["param_ablations"]) {
      std::string saved = "—";
      if (p.contains("saved_ms") && p["saved_ms"].is_object())
        saved = fmt::format("{:+.4f} [{:+.4f}, {:+.4f}]", p["saved_ms"].value("median", 0.0), p["saved_ms"].value("ci95_low", 0.0),
                            p["saved_ms"].value("ci95_high", 0.0));
      else if (!p.value("note", std::string()).empty())
        saved = p.value("note", std::string());
      md += fmt::format("| {} | `{}` | {} | {} | {} | {} | {} |\n", str(p, "iteration"), str(p, "champion_id"), str(p, "param"),
                        str(p, "champion_value"), str(p, "baseline_value"), str(p, "effect"), saved);
    }
  }

  md += "\n## Frontier (runners-up)\n\n| candidate | median ms | methods |\n| --- | --- | --- |\n";
  if (rec.frontier)
    for (const auto& f : *rec.frontier)
      md += fmt::format("| `{}` | {} | {} |\n", opt_text(f.id), opt_num(f.median_ms), f.methods ? text_list(*f.methods) : "—");

  if (s.contains("candidate_costs") && s["candidate_costs"].value("candidates", 0) > 0) {
    const auto& c = s["candidate_costs"];
    md += fmt::format("\n## Per-candidate cost ({} measured)\n\n| wall ms | compile | SASS | measure (compile excluded) | "
                      "other cases | measure, all cases |\n| --- | --- | --- | --- | --- | --- |\n",
                      c.value("candidates", 0));
    for (const char* row : {"median_ms", "p90_ms"})
      md += fmt::format("| {} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:.0f} |\n", row == std::string("median_ms") ? "median" : "p90",
                        c[row].value("compile", 0.0), c[row].value("sass", 0.0), c[row].value("measure", 0.0),
                        c[row].value("cases", 0.0), c[row].value("measure_all_cases", c[row].value("measure", 0.0)));
  }
  // Issue 39 item 2: what the results database stood for, and what was raced again before it could be crowned.
  if (s.contains("reuse") && s["reuse"].is_object() && s["reuse"].value("reused", 0) > 0) {
    const auto& ru = s["reuse"];
    const auto again = ru.value("raced_again", util::Json::array());
    md += fmt::format("\n## Reused from the results database\n\n{} of {} evaluations were not measured: a record of the same "
                      "configuration under the same key stood for each (docs/DATABASE.md \"Reuse\"; `--remeasure` measures "
                      "them). {} reused finalist(s) that could be crowned were raced again in this run{}.\n\n"
                      "| candidate | iteration | status | median ms (stored) | reused from |\n| --- | --- | --- | --- | --- |\n",
                      ru.value("reused", 0), ru.value("evaluations", 0), again.size(), again.empty() ? "" : ": " + list(again));
    for (const auto& e : ru.value("records", util::Json::array()))
      md += fmt::format("| `{}`{} | {} | {} | {} | reused from run {} at {} (record {}) |\n", str(e, "id"),
                        e.value("ablation", false) ? " (ablation)" : "", str(e, "iteration"), str(e, "status"), num(e, "median_ms"),
                        str(e, "run_dir"), str(e, "recorded_at"), str(e, "record_id"));
  }
  // Issue 39 item 2(b): the configurations of other shapes that led the first design, each measured here.
  if (s.contains("warm_start") && s["warm_start"].is_object() && !s["warm_start"].value("points", util::Json::array()).empty()) {
    md += "\n## Warm start from other shapes\n\nThe first design began with the fastest configurations the results database "
          "held of this kernel at the nearest other shapes on this GPU model (docs/DATABASE.md \"Warm start\"); each was "
          "measured in this run like any candidate.\n\n"
          "| configuration | from dims | rank there | median ms there | candidate | median ms here |\n"
          "| --- | --- | --- | --- | --- | --- |\n";
    for (const auto& e : s["warm_start"]["points"]) {
      const std::string from = e.contains("from_dims") ? dims_text(e["from_dims"]) : "n/a";
      md += fmt::format("| `{}` | {} | {} | {} (record {}) | {} | {} |\n", str(e, "key"), from, str(e, "rank"),
                        num(e, "median_ms"), str(e, "record_id"),
                        e.value("candidate_id", std::string()).empty() ? "not proposed" : "`" + str(e, "candidate_id") + "`",
                        e["median_ms_here"].is_number() ? num(e, "median_ms_here")
                                                        : (e["status_here"].is_string() ? str(e, "status_here") : "not measured"));
    }
  }
  // Several measuring slots (issue 21): what each GPU did, and how busy it was over the measuring phases' wall.
  if (s.contains("measuring") && s["measuring"].is_object() && s["measuring"].value("per_slot", util::Json::array()).size() > 1) {
    const auto& ms = s["measuring"];
    const double wall = ms.value("wall_s", 0.0);
    md += fmt::format("\n## Measuring\n\n{} slots, candidates handed to whichever was free; every race runs whole on one GPU. "
                      "Utilisation is a slot's busy time over the measuring phases' wall time ({:.1f} s).\n\n"
                      "| slot | candidates (attempts) | worker lost | busy s | utilisation |\n| --- | --- | --- | --- | --- |\n",
                      ms["per_slot"].size(), wall);
    for (const auto& p : ms["per_slot"]) {
      const double busy = p.value("busy_s", 0.0);
      md += fmt::format("| {} | {} | {} | {:.1f} | {:.0f}% |\n", str(p, "name"), p.value("runs", 0), p.value("lost", 0), busy,
                        wall > 0 ? 100.0 * busy / wall : 0.0);
    }
    if (ms.contains("retried") && ms["retried"].is_array() && !ms["retried"].empty()) {
      int lost = 0;
      for (const auto& rt : ms["retried"]) lost += rt.value("lost", false) ? 1 : 0;
      md += fmt::format("\n{} candidate(s) lost their worker and were measured again on another GPU; {} lost it there too "
                        "(reported with that verdict).\n", ms["retried"].size(), lost);
    }
  }
  if (s.contains("derived") && s["derived"].is_object()) md += render_derived_markdown(s["derived"]);
  if (s.contains("llm") && !s["llm"].is_null()) md += search::render_llm_usage_markdown(s["llm"]);
  md += "\n## Where the time went\n\n";
  if (rec.wall) {
    auto at = [](const std::optional<double>& v) { return v ? fmt::format("{:.1f} s", *v) : std::string("never"); };
    md += fmt::format("Whole wall {:.1f} s; the first candidate measured at {}; the final champion found at {} (seconds "
                      "from the loop's start; a resumed run counts its earlier parts).\n\n",
                      rec.wall->whole_s, at(rec.wall->first_candidate_s), at(rec.wall->champion_s));
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
  if (!j.is_object() || !j.contains("schema") || j["schema"] != kSummarySchema)
    return input_error((dir / "summary.json").string() + " is not a kopt summary (schema " + kSummarySchema + ")");
  KOPT_TRY_ASSIGN(record::SummaryRecord s, record::parse_file<record::SummaryRecord>(j, (dir / "summary.json").string(),
                                                                                      record::summary_record_from_json));
  std::string md = render_markdown(s);
  KOPT_TRY(util::write_file_atomic(dir / "summary.md", md));
  return md;
}

}  // namespace kopt::report
