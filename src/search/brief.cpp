#include "search/brief.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "search/selection.h"
#include "util/strings.h"

namespace kopt::search {

using util::Json;

util::Json top_metrics(const Registry& reg, const std::map<std::string, double>& metrics, size_t per_axis) {
  Json out = Json::object();
  for (Axis axis : kAllAxes) {
    struct Row {
      std::string metric;
      double value = 0;
      int fired = 0;
      std::string why;
    };
    std::map<std::string, Row> rows;
    for (const auto& m : reg.methods()) {
      if (m.axis != axis) continue;
      for (const auto& e : m.evidence) {
        auto it = metrics.find(e.metric);
        if (it == metrics.end()) continue;
        Row& r = rows[e.metric];
        r.metric = e.metric;
        r.value = it->second;
        if (e.holds(it->second)) {
          if (r.fired == 0) r.why = e.why;
          r.fired++;
        }
      }
    }
    std::vector<Row> sorted;
    for (auto& [k, r] : rows) sorted.push_back(r);
    std::stable_sort(sorted.begin(), sorted.end(), [](const Row& a, const Row& b) { return a.fired > b.fired; });
    Json list = Json::array();
    for (size_t i = 0; i < sorted.size() && i < per_axis; ++i) {
      Json j = {{"metric", sorted[i].metric}, {"value", sorted[i].value}, {"evidence_fired", sorted[i].fired}};
      if (!sorted[i].why.empty()) j["reading"] = sorted[i].why;
      list.push_back(std::move(j));
    }
    out[std::string(axis_name(axis))] = list;
  }
  return out;
}

namespace {

Json method_entry(const Method& m, const MethodPick& pick) {
  Json j = {{"id", m.id},
            {"name", m.name},
            {"axis", axis_name(m.axis)},
            {"description", m.description},
            {"numerics", numerics_name(m.numerics)},
            {"guard", guard_macro(m.id)},
            {"evidence", pick.fired},
            {"sass_signature", sass::to_json(m.sass)}};
  if (!pick.required_by.empty()) j["required_by"] = pick.required_by;
  if (!m.relations.conflicts.empty()) j["conflicts"] = m.relations.conflicts;
  if (!m.flags.empty()) j["flags"] = m.flags;
  return j;
}

Json history_entry(const Measurement& m) {
  Json j = {{"id", m.candidate.id},
            {"iteration", m.iteration},
            {"status", candidate_status_name(m.status)},
            {"methods", m.candidate.methods},
            {"params", m.candidate.params},
            {"flags", m.candidate.flags}};
  j["median_ms"] = m.median_ms ? Json(*m.median_ms) : Json(nullptr);
  return j;
}

std::vector<std::string> rules(const BriefInput& in, const GeneratorInput& g) {
  bool python = language_of(in.champion_file) == SourceLanguage::kPython;
  std::vector<std::string> r = {
      fmt::format("Write at most {} candidate source files inside this directory ({}); never write anywhere else.", g.k,
                  g.iteration_dir.string()),
      python ? fmt::format("Keep the entry points exactly as they are (whitespace aside): {}", in.signature)
             : fmt::format("Keep solve's declaration exactly as it is (whitespace aside): extern \"C\" {}", in.signature),
      python ? "Guard every method you apply with a tl.constexpr flag KOPT_<ID> (upper-case method id) used as "
               "`if KOPT_<ID>:`; kopt passes 0 or 1 so it can run the kernel with and without the method."
             : "Guard every method you apply with `#if KOPT_<ID>` (upper-case method id) ... `#else` (the code "
               "without it) `#endif`; kopt defines KOPT_<ID> as 0 or 1 so it can build the kernel with and without "
               "the method. A method without a guard is recorded as not ablatable.",
      "Claim only methods of kopt's registry (`kopt methods`), and list in the manifest the methods each candidate "
      "really implements; kopt verifies each claim in the SASS and by ablation.",
      fmt::format("Numerics mode is {}: {}.", numerics_mode_name(g.numerics),
                  g.numerics == NumericsMode::kStrict      ? "results must stay bitwise identical"
                  : g.numerics == NumericsMode::kReference ? "results must match the reference within its tolerance; "
                                                             "reassociation is fine, lower precision is not"
                                                           : "approximations are allowed within the approximate tolerance"),
      "Do not change what the kernel computes: every candidate is checked against the reference on several seeds.",
      fmt::format("Write {} last: {{\"candidates\": [{{\"file\": \"v1{}\", \"methods\": [\"...\"], \"params\": "
                  "{{\"NAME\": 128}}, \"flags\": [\"-Xptxas\", \"-dlcm=cg\"]}}]}}. Params become {}; flags are extra "
                  "nvcc flags (never output paths).",
                  in.manifest_name, python ? ".py" : ".cu", python ? "tl.constexpr arguments (num_warps/num_stages: launch options)" : "-D macros"),
  };
  return r;
}

}  // namespace

util::Json make_brief(const BriefInput& in) {
  const GeneratorInput& g = *in.generator;
  Json brief = Json::object();
  brief["iteration"] = g.iteration;
  brief["k"] = g.k;
  brief["backend"] = backend_name(g.backend);
  brief["arch"] = fmt::format("sm_{}", g.arch);
  brief["numerics_mode"] = numerics_mode_name(g.numerics);
  brief["directory"] = g.iteration_dir.string();
  brief["manifest"] = in.manifest_name;

  Json champ = {{"file", in.champion_file}, {"source", in.champion_source_text}};
  if (g.champion) {
    const auto& c = g.champion->candidate;
    champ["id"] = c.id;
    champ["median_ms"] = g.champion->median_ms ? Json(*g.champion->median_ms) : Json(nullptr);
    champ["methods"] = c.methods;
    champ["params"] = c.params;
    champ["flags"] = c.flags;
    champ["defines"] = c.defines;
  }
  brief["champion"] = champ;
  brief["contract"] = {{"signature", in.signature}};
  brief["dims"] = g.context.dims;
  brief["roofline"] = g.context.roofline.is_null() ? Json::object() : g.context.roofline;
  brief["metrics"] = g.registry ? top_metrics(*g.registry, g.metrics) : Json::object();
  brief["sass"] = g.context.sass_summary.is_null() ? Json::object() : g.context.sass_summary;

  Json methods = Json::array();
  if (g.registry)
    for (const auto& p : in.selection.picks)
      if (const Method* m = g.registry->find(p.id)) methods.push_back(method_entry(*m, p));
  brief["methods"] = methods;

  Json verdicts = Json::object();
  for (Verdict v : {Verdict::kEffective, Verdict::kMeasuredEffective, Verdict::kIneffective, Verdict::kImplementationFailed, Verdict::kUnverified,
                    Verdict::kNotAblatable})
    verdicts[std::string(verdict_name(v))] = Json::array();
  for (const auto& v : g.verdicts)
    verdicts[std::string(verdict_name(v.verdict))].push_back({{"method", v.method}, {"iteration", v.iteration}});
  // The fastest measured candidates, then every failure (what not to repeat).
  std::vector<const Measurement*> ok, failed;
  for (const auto& m : g.history) (m.status == CandidateStatus::kOk && m.median_ms ? ok : failed).push_back(&m);
  std::stable_sort(ok.begin(), ok.end(), [](const Measurement* a, const Measurement* b) { return *a->median_ms < *b->median_ms; });
  Json measured = Json::array();
  for (size_t i = 0; i < ok.size() && i < 20; ++i) measured.push_back(history_entry(*ok[i]));
  for (const auto* m : failed) measured.push_back(history_entry(*m));
  brief["history"] = {{"verdicts", verdicts}, {"measured", measured}};
  brief["rules"] = rules(in, g);
  return brief;
}

std::string render_brief_markdown(const util::Json& b) {
  std::string s;
  s += fmt::format("# kopt brief: iteration {}\n\n", b.value("iteration", 0));
  s += fmt::format("Write up to **{}** candidate variants of the champion kernel in `{}` and list them in `{}`.\n",
                   b.value("k", 0), b.value("directory", std::string()), b.value("manifest", std::string()));
  s += fmt::format("Backend {}, device {}, numerics mode {}.\n\n", b.value("backend", std::string()),
                   b.value("arch", std::string()), b.value("numerics_mode", std::string()));
  s += "## Rules\n";
  for (const auto& r : b["rules"]) s += "- " + r.get<std::string>() + "\n";

  s += "\n## Methods to apply in this iteration\n";
  if (b["methods"].empty()) s += "None: the profile gave no evidence within this iteration's budget.\n";
  for (const auto& m : b["methods"]) {
    s += fmt::format("\n### {} (`{}`, {} axis, guard `{}`)\n{}\n\nNumerics: {}.", m["name"].get<std::string>(),
                     m["id"].get<std::string>(), m["axis"].get<std::string>(), m["guard"].get<std::string>(),
                     m["description"].get<std::string>(), m["numerics"].get<std::string>());
    if (m.contains("required_by")) s += fmt::format(" Required by `{}`.", m["required_by"].get<std::string>());
    s += " Evidence:\n";
    for (const auto& e : m["evidence"]) s += "- " + e.get<std::string>() + "\n";
    if (!m["sass_signature"].empty()) s += fmt::format("SASS signature kopt will look for: `{}`\n", m["sass_signature"].dump());
  }

  const auto& ch = b["champion"];
  s += "\n## Champion\n";
  if (ch.contains("id"))
    s += fmt::format("`{}`: {} ms, methods [{}], params {}, flags {}\n", ch["id"].get<std::string>(),
                     ch["median_ms"].is_null() ? std::string("?") : fmt::format("{:.4g}", ch["median_ms"].get<double>()),
                     util::join(ch["methods"].get<std::vector<std::string>>(), ", "), ch["params"].dump(), ch["flags"].dump());
  s += fmt::format("\nEntry point to keep: `{}`\n", b["contract"]["signature"].get<std::string>());
  if (!b["dims"].empty()) s += fmt::format("Dimensions: `{}`\n", b["dims"].dump());
  s += fmt::format("\nSource (`{}`):\n\n```\n{}\n```\n", ch["file"].get<std::string>(), ch["source"].get<std::string>());

  s += "\n## Profile of the champion\n";
  if (!b["roofline"].empty()) s += fmt::format("Roofline: `{}`\n\n", b["roofline"].dump());
  for (const auto& [axis, rows] : b["metrics"].items()) {
    s += fmt::format("**{}**\n", axis);
    if (rows.empty()) s += "- (no metric of this axis in the profile)\n";
    for (const auto& r : rows)
      s += fmt::format("- `{}` = {:.4g}{}\n", r["metric"].get<std::string>(), r["value"].get<double>(),
                       r.contains("reading") ? " — " + r["reading"].get<std::string>() : std::string());
  }
  if (!b["sass"].empty()) s += fmt::format("\nSASS summary: `{}`\n", b["sass"].dump());

  s += "\n## History\n";
  for (const auto& [verdict, list] : b["history"]["verdicts"].items()) {
    if (list.empty()) continue;
    std::vector<std::string> items;
    for (const auto& v : list) items.push_back(fmt::format("{} (iteration {})", v["method"].get<std::string>(), v["iteration"].get<int>()));
    s += fmt::format("- {}: {}\n", verdict, util::join(items, ", "));
  }
  if (!b["history"]["measured"].empty()) {
    s += "\n| candidate | iteration | status | median ms | methods |\n| --- | --- | --- | --- | --- |\n";
    for (const auto& m : b["history"]["measured"])
      s += fmt::format("| {} | {} | {} | {} | {} |\n", m["id"].get<std::string>(), m["iteration"].get<int>(),
                       m["status"].get<std::string>(),
                       m["median_ms"].is_null() ? std::string("-") : fmt::format("{:.4g}", m["median_ms"].get<double>()),
                       util::join(m["methods"].get<std::vector<std::string>>(), ", "));
  }
  return s;
}

}  // namespace kopt::search
