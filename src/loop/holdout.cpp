#include "loop/holdout.h"

#include <fmt/format.h>

#include <array>

#include "util/strings.h"

namespace kopt::loop {

namespace {

struct Row {
  HoldoutVerdict v;
  std::string_view name, text;
};
constexpr std::array<Row, 4> kRows = {{
    {HoldoutVerdict::kPass, "pass", "the baseline and the champion are both correct"},
    {HoldoutVerdict::kOutsideDomain, "outside_domain", "outside the kernel's domain: the baseline itself fails here"},
    {HoldoutVerdict::kChampionFails, "champion_fails", "the champion fails where the baseline passes"},
    {HoldoutVerdict::kNotRun, "not_run", "not measured"},
}};
static_assert(kRows.size() == static_cast<size_t>(HoldoutVerdict::kNotRun) + 1, "one row per verdict");

std::optional<double> number(const util::Json& j) {
  return j.is_number() ? std::optional<double>(j.get<double>()) : std::nullopt;
}

// The first failing output of one comparison block {"outputs": {name: compare JSON}, "inputs": {...}}.
std::optional<FirstBad> from_block(const util::Json& block, int seed) {
  if (!block.is_object()) return std::nullopt;
  if (block.contains("outputs") && block["outputs"].is_object())
    for (const auto& [name, c] : block["outputs"].items()) {
      if (!c.is_object() || c.value("ok", true)) continue;
      FirstBad f;
      f.buffer = name;
      f.seed = seed;
      f.index = c.value("first_bad_index", int64_t{-1});
      f.coords = c.value("first_bad_coords", std::vector<int64_t>{});
      f.expected = number(c.value("expected_at_first_bad", util::Json()));
      f.actual = number(c.value("actual_at_first_bad", util::Json()));
      return f;
    }
  if (block.contains("inputs") && block["inputs"].is_object())
    for (const auto& [name, c] : block["inputs"].items()) {
      if (!c.is_object() || c.value("unchanged", true)) continue;
      FirstBad f;
      f.buffer = name;
      f.seed = seed;
      f.index = c.value("first_changed_index", int64_t{-1});
      f.input_modified = true;
      return f;
    }
  return std::nullopt;
}

}  // namespace

std::string_view holdout_verdict_name(HoldoutVerdict v) { return kRows[static_cast<size_t>(v)].name; }
std::string_view describe(HoldoutVerdict v) { return kRows[static_cast<size_t>(v)].text; }

HoldoutRun holdout_run_from(const runner::RunOutcome& o) {
  HoldoutRun r;
  r.status = o.status;
  r.message = o.message;
  r.details = o.details;
  if (o.timing && runner::is_correct(o.status)) r.median_ms = o.timing->median_ms;
  return r;
}

util::Json to_json(const HoldoutRun& r) {
  util::Json j = {{"status", runner::status_name(r.status)}, {"message", r.message}};
  j["median_ms"] = r.median_ms ? util::Json(*r.median_ms) : util::Json(nullptr);
  if (!r.from_cache.empty()) j["from_cache"] = r.from_cache;
  return j;
}

std::optional<HoldoutRun> holdout_run_from_json(const util::Json& j) {
  if (!j.is_object() || !j.contains("median_ms") || !j["median_ms"].is_number()) return std::nullopt;
  HoldoutRun r;
  auto status = runner::parse_status(j.value("status", std::string()));
  if (!status || !runner::is_correct(*status)) return std::nullopt;
  r.status = *status;
  r.message = j.value("message", std::string());
  r.median_ms = j["median_ms"].get<double>();
  return r;
}

std::string FirstBad::text() const {
  std::string coords_text;
  for (size_t i = 0; i < coords.size(); ++i) coords_text += (i ? "," : "") + std::to_string(coords[i]);
  std::string where = (input_modified ? "input " : "output ") + buffer + (seed >= 0 ? ", seed " + std::to_string(seed) : "");
  if (input_modified) return fmt::format("{}: modified, first changed element {}", where, index);
  return fmt::format("{}: first bad index {}{}: expected {}, got {}", where, index,
                     coords_text.empty() ? "" : " [" + coords_text + "]", expected ? fmt::format("{:.6g}", *expected) : "nan/inf",
                     actual ? fmt::format("{:.6g}", *actual) : "nan/inf");
}

std::optional<FirstBad> first_bad_element(const util::Json& result) {
  if (!result.is_object()) return std::nullopt;
  if (result.contains("seeds") && result["seeds"].is_array())
    for (const auto& s : result["seeds"])
      if (auto f = from_block(s, s.value("seed", -1))) return f;
  if (result.contains("recheck"))
    if (auto f = from_block(result["recheck"], -1)) return f;
  return std::nullopt;
}

HoldoutCaseResult judge_holdout_case(const workload::Case& shape, const HoldoutRun& baseline, const HoldoutRun& champion) {
  HoldoutCaseResult r;
  r.shape = shape;
  r.baseline = baseline;
  r.champion = champion;
  const std::string dims = format_dims(shape.realised);
  auto status_text = [](const HoldoutRun& h) {
    return std::string(runner::status_name(h.status)) + (h.message.empty() ? "" : ": " + h.message);
  };
  const bool base_ok = runner::is_correct(baseline.status), champ_ok = runner::is_correct(champion.status);
  if (baseline.status == runner::RunStatus::kInterrupted || champion.status == runner::RunStatus::kInterrupted) {
    r.verdict = HoldoutVerdict::kNotRun;
    r.text = fmt::format("{} ({}): not measured (interrupted)", shape.name, dims);
  } else if (!base_ok) {
    r.verdict = HoldoutVerdict::kOutsideDomain;
    r.text = fmt::format("{} ({}): outside the kernel's domain: the baseline itself fails here ({}){}", shape.name, dims,
                         status_text(baseline), champ_ok ? "; the champion passes" : "; the champion fails too");
  } else if (!champ_ok) {
    r.verdict = HoldoutVerdict::kChampionFails;
    r.first_bad = first_bad_element(champion.details);
    r.text = fmt::format("{} ({}): the champion FAILS where the baseline passes: {}{}", shape.name, dims,
                         runner::describe(champion.status), r.first_bad ? "; " + r.first_bad->text() : ": " + champion.message);
  } else {
    r.verdict = HoldoutVerdict::kPass;
    r.text = fmt::format("{} ({}): both correct", shape.name, dims);
    if (baseline.median_ms && champion.median_ms && *champion.median_ms > 0)
      r.text += fmt::format("; baseline {:.4f} ms, champion {:.4f} ms ({:.2f}x)", *baseline.median_ms, *champion.median_ms,
                            *baseline.median_ms / *champion.median_ms);
  }
  return r;
}

HoldoutSummary summarize_holdout(std::vector<HoldoutCaseResult> cases, const std::string& note) {
  HoldoutSummary s;
  s.note = note;
  std::vector<std::string> fails;
  for (const auto& c : cases) {
    switch (c.verdict) {
      case HoldoutVerdict::kPass: ++s.passed; break;
      case HoldoutVerdict::kOutsideDomain: ++s.outside_domain; break;
      case HoldoutVerdict::kChampionFails:
        ++s.champion_fails;
        fails.push_back(c.text);
        break;
      case HoldoutVerdict::kNotRun: ++s.not_run; break;
    }
  }
  if (!fails.empty())
    s.warning = fmt::format("the champion fails at {} held-out shape(s) where the baseline passes; do not use it at "
                            "such shapes without a fix:\n  {}",
                            fails.size(), util::join(fails, "\n  "));
  s.cases = std::move(cases);
  return s;
}

util::Json to_json(const HoldoutSummary& s) {
  util::Json cases = util::Json::array();
  for (const auto& c : s.cases) {
    // clang-format off
    util::Json j = {{"case", workload::to_json(c.shape)}, {"verdict", holdout_verdict_name(c.verdict)},
                    {"baseline", to_json(c.baseline)}, {"champion", to_json(c.champion)}, {"text", c.text}};
    // clang-format on
    if (c.first_bad)
      j["first_bad"] = {{"buffer", c.first_bad->buffer}, {"seed", c.first_bad->seed}, {"index", c.first_bad->index},
                        {"coords", c.first_bad->coords}, {"input_modified", c.first_bad->input_modified},
                        {"expected", c.first_bad->expected ? util::Json(*c.first_bad->expected) : util::Json(nullptr)},
                        {"actual", c.first_bad->actual ? util::Json(*c.first_bad->actual) : util::Json(nullptr)},
                        {"text", c.first_bad->text()}};
    cases.push_back(std::move(j));
  }
  return {{"passed", s.passed},         {"outside_domain", s.outside_domain}, {"champion_fails", s.champion_fails},
          {"not_run", s.not_run},       {"warning", s.warning},               {"note", s.note},
          {"cases", cases}};
}

}  // namespace kopt::loop
