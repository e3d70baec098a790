#pragma once
// The external-command generator (`--generator 'CMD ...'`): kopt writes brief.json and brief.md into the
// iteration directory, runs the command there (env KOPT_BRIEF=<brief.json>), and reads back
// manifest.json, validating every candidate it lists (docs/GENERATORS.md).
#include <filesystem>
#include <map>
#include <string>

#include "search/generator.h"
#include "util/process.h"

namespace kopt::search {

struct ExternalOptions {
  double timeout_s = 1800;      // the command's wall-clock limit
  bool require_guards = false;  // true: a claimed method without its KOPT_<ID> conditional rejects the manifest
                                // false: the method is recorded as not ablatable
  std::string manifest_name = "manifest.json";
};

// Everything read_manifest checks against.
struct ManifestContext {
  std::filesystem::path iteration_dir;
  const Registry* registry = nullptr;
  Backend backend = Backend::kCuda;
  SourceLanguage language = SourceLanguage::kCuda;  // candidates must be in the champion's language
  std::string signature;                            // normalised entry point every candidate must keep
  int k = 4;
  bool require_guards = false;
  // The champion's guard settings: a guard found in a candidate's source but not claimed keeps the
  // champion's value (on: the method is claimed too; off or unknown: KOPT_<ID>=0).
  std::map<std::string, bool> champion_guards;
};

// What every brief-based generator (external command, language model, manual) starts from: this iteration's
// methods, the champion's copy and the brief, written into the iteration directory as champion.cu (or .py),
// brief.json and brief.md; and what every candidate will be checked against.
struct BriefFiles {
  std::filesystem::path dir;  // the iteration directory, canonical
  std::string champion_text;
  SourceLanguage language = SourceLanguage::kCuda;
  MethodSelection selection;
  util::Json brief;           // brief.json's body
  std::string markdown;       // brief.md
  ManifestContext manifest;   // the checks read_manifest applies
};
Result<BriefFiles> write_brief_files(const GeneratorInput& in, const std::string& manifest_name, bool require_guards);

// The validated candidates in `read`, minus any identical (content hash) to one already measured or listed
// earlier (noted), numbered i<iteration>x<n>; `read`'s notes are kept.
GeneratorOutput accept_candidates(const GeneratorInput& in, GeneratorOutput read, MethodSelection selection);

// Validates a manifest (already parsed JSON) and turns its entries into candidates. Any invalid entry
// rejects the whole manifest with an input error (exit 4) naming the entry and what is wrong. Reads the
// listed files. More than k entries: the first k are kept (a note says so).
Result<GeneratorOutput> read_manifest(const util::Json& manifest, const ManifestContext& ctx);

class ExternalGenerator : public Generator {
 public:
  ExternalGenerator(std::string command, util::CommandRunner& runner, ExternalOptions opts = {})
      : command_(std::move(command)), runner_(runner), opts_(std::move(opts)) {}
  std::string name() const override { return "external: " + command_; }
  Result<GeneratorOutput> generate(const GeneratorInput& in) override;

 private:
  std::string command_;
  util::CommandRunner& runner_;
  ExternalOptions opts_;
};

}  // namespace kopt::search
