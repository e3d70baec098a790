#include "loop/proposals.h"

#include <fmt/format.h>

#include <algorithm>

#include "loop/reuse.h"
#include "record/candidate.h"
#include "record/run_record.h"
#include "util/hash.h"

namespace kopt::loop {

namespace {
// Each measured configuration with its status, in a canonical order (the order they were measured in is not state).
util::Json measured_json(const search::GeneratorInput& in) {
  std::vector<std::string> rows;
  for (const auto* list : {&in.history, &in.ablations})
    for (const auto& m : *list)
      rows.push_back(util::Json::array({opponent_json(m.candidate), search::candidate_status_name(m.status)}).dump());
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  util::Json out = util::Json::array();
  for (const auto& r : rows) out.push_back(util::Json::parse(r));
  return out;
}

util::Json verdicts_json(const search::GeneratorInput& in) {
  std::vector<std::pair<std::string, std::string>> v;
  for (const auto& m : in.verdicts) v.emplace_back(m.method, std::string(search::verdict_name(m.verdict)));
  std::sort(v.begin(), v.end());
  util::Json out = util::Json::array();
  for (const auto& [method, verdict] : v) out.push_back(util::Json::array({method, verdict}));
  return out;
}

util::Json outlook_json(const std::optional<search::Outlook>& o) {
  if (!o) return nullptr;
  return {{"remaining", o->remaining},
          {"best_lcb_ms", o->best_lcb_ms ? util::Json(*o->best_lcb_ms) : util::Json(nullptr)},
          {"best_config", o->best_config ? util::Json(*o->best_config) : util::Json(nullptr)},
          {"observations", o->observations},
          {"predicted_infeasible", o->predicted_infeasible}};
}

search::Outlook outlook_from(const util::Json& j) {
  search::Outlook o;
  o.remaining = j.at("remaining").get<long>();
  if (!j.at("best_lcb_ms").is_null()) o.best_lcb_ms = j["best_lcb_ms"].get<double>();
  if (!j.at("best_config").is_null()) o.best_config = j["best_config"].get<search::Config>();
  o.observations = j.at("observations").get<int>();
  o.predicted_infeasible = j.at("predicted_infeasible").get<long>();
  return o;
}
}  // namespace

std::string proposal_state_hash(const std::string& kernel_key_hash, std::string_view generator, const search::GeneratorInput& in) {
  const util::Json state = {{"kernel", kernel_key_hash},
                            {"generator", generator},
                            {"k", in.k},
                            {"seed", in.seed},
                            {"iteration", in.iteration},
                            {"champion", in.champion ? opponent_json(in.champion->candidate) : util::Json(nullptr)},
                            {"measured", measured_json(in)},
                            {"verdicts", verdicts_json(in)}};
  return util::content_hash(state.dump());
}

util::Json proposal_json(const search::GeneratorOutput& out, const std::filesystem::path& baseline_source) {
  util::Json cands = util::Json::array();
  for (const auto& c : out.candidates) cands.push_back(record::to_json(record::config_of(c)));
  return {{"candidates", cands},
          {"exploring", out.exploring},
          {"notes", out.notes},
          {"outlook", outlook_json(out.outlook)},
          {"baseline_source", baseline_source.string()}};
}

Status apply_proposal(const util::Json& body, const std::filesystem::path& baseline_source, search::GeneratorOutput& out) {
  search::GeneratorOutput got = out;
  try {
    const std::string kept_source = body.at("baseline_source").get<std::string>();
    got.candidates.clear();
    const util::Json& cands = body.at("candidates");
    for (size_t i = 0; i < cands.size(); ++i) {
      search::Candidate c = record::candidate_of(record::candidate_config_from_json(cands[i], "candidates[" + std::to_string(i) + "]"));
      if (c.source != kept_source)
        return input_error(fmt::format("kept proposals: candidate {} is written against {}, not the baseline {}", c.id,
                                       c.source.string(), kept_source));
      c.source = baseline_source;
      got.candidates.push_back(std::move(c));
    }
    got.exploring = body.at("exploring").get<bool>();
    got.notes = body.at("notes").get<std::vector<std::string>>();
    got.outlook = body.at("outlook").is_null() ? std::nullopt : std::optional<search::Outlook>(outlook_from(body["outlook"]));
  } catch (const std::exception& e) {  // a RecordError or a JSON type error: the body is not what proposal_json writes
    return input_error(std::string("kept proposals are malformed: ") + e.what());
  }
  out = std::move(got);
  return ok_status();
}

}  // namespace kopt::loop
