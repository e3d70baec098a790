#pragma once
// `--generator manual`: kopt writes the brief (brief.json, brief.md, champion.cu) into the iteration directory,
// says where, and waits for a manifest.json there, so a person or an interactive coding agent is the generator.
// The manifest and its files are validated exactly as an external command's (docs/GENERATORS.md).
#include <cstdio>
#include <functional>
#include <string>

#include "search/generator.h"

namespace kopt::search {

struct ManualOptions {
  double timeout_s = 3600;  // 0: wait without a limit
  double poll_s = 0.2;
  bool require_guards = false;
  std::string manifest_name = "manifest.json";
};

class ManualGenerator : public Generator {
 public:
  // `say` receives the lines for the person (where the brief is, what to write, how long kopt waits);
  // by default they go to stderr.
  explicit ManualGenerator(ManualOptions opts = {}, std::function<void(const std::string&)> say = {});
  std::string name() const override { return "manual"; }
  // Errors: kInput (exit 4) on timeout or an invalid manifest, kInterrupted on Ctrl-C (the run stays resumable).
  Result<GeneratorOutput> generate(const GeneratorInput& in) override;

 private:
  ManualOptions opts_;
  std::function<void(const std::string&)> say_;
};

}  // namespace kopt::search
