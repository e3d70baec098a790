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

// The methods that may switch on in this iteration for a kernel's space, champion and selection:
// per dimension, the allowed value indices (picked methods on, champion's methods kept, others off).
std::vector<std::vector<int>> allowed_values(const SearchSpace& space, const std::optional<Candidate>& champion,
                                             const MethodSelection& selection);

// The baseline: every dimension at its default (params' defaults, guards and flag methods off).
Candidate baseline_candidate(const SearchSpace& space, const Registry& reg, const std::filesystem::path& source,
                             const std::string& source_text);

}  // namespace kopt::search
