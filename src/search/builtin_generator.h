#pragma once
// The built-in generator: picks this iteration's methods from the kernel's offered ones by profile
// evidence (selection.h), pins their guards on, and searches the declared parameters (strategy.h).
// Every candidate is the baseline source with different -D macros / flags / constexprs.
#include "search/generator.h"

namespace kopt::search {

class BuiltinGenerator : public Generator {
 public:
  std::string name() const override { return "builtin"; }
  Result<GeneratorOutput> generate(const GeneratorInput& in) override;
};

// The values each dimension may take in this iteration, for a kernel's space, champion, selection and the
// verdicts so far. Params: every value. A method's guard: pinned on when the champion has it on and its latest
// ablation verdict is `effective`; free (off or on: the search decides) when it was picked this iteration or
// the champion has it on without that verdict; otherwise off. So a picked method is tried, not imposed: a
// method that slows this kernel down is dropped by the search instead of riding along in every candidate.
std::vector<std::vector<int>> allowed_values(const SearchSpace& space, const std::optional<Candidate>& champion,
                                             const MethodSelection& selection,
                                             const std::vector<MethodVerdict>& verdicts = {});

// The baseline: every dimension at its default (params' defaults, guards and flag methods off).
Candidate baseline_candidate(const SearchSpace& space, const Registry& reg, const std::filesystem::path& source,
                             const std::string& source_text);

}  // namespace kopt::search
