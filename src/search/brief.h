#pragma once
// The brief an external generator reads (brief.json, and brief.md for people and language models):
// the champion, the contract, the profile, this iteration's methods, the history and the rules.
// Pure: everything comes in as values (docs/GENERATORS.md describes every field).
#include <string>

#include "search/generator.h"
#include "util/json_io.h"

namespace kopt::search {

struct BriefInput {
  const GeneratorInput* generator = nullptr;
  MethodSelection selection;
  std::string champion_source_text;
  std::string champion_file;  // the copy of the champion's source written next to the brief
  std::string signature;      // normalised entry-point declaration the candidates must keep
  std::string manifest_name = "manifest.json";
};

// Up to `per_axis` metrics per axis: those the registry's evidence for that axis reads, present in the
// profile, the ones firing evidence first.
util::Json top_metrics(const Registry& reg, const std::map<std::string, double>& metrics, size_t per_axis = 8);

util::Json make_brief(const BriefInput& in);
std::string render_brief_markdown(const util::Json& brief);

}  // namespace kopt::search
