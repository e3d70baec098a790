#pragma once
// Small, pure scans of kernel source text: the entry point's declaration (to check a generated variant
// kept it) and whether a method guard is used in a conditional. Deliberately simple; the contract module
// owns the full signature parser and may replace extract_entry_signature.
#include <optional>
#include <string>
#include <string_view>

namespace kopt::search {

enum class SourceLanguage { kCuda, kPython };
SourceLanguage language_of(std::string_view file_name);  // ".py" -> Python, anything else CUDA/C++

// Removes // and /* */ comments (CUDA) or # comments (Python), keeping line breaks and string literals.
std::string strip_comments(std::string_view text, SourceLanguage lang);

// CUDA: the normalised text of `extern "C" ... solve(...)` ("void solve(const float*A,float*C,int n)"):
// comments removed, whitespace collapsed, no spaces around ( ) , * & [ ]. Python (Triton): the same for
// `def setup(...)` and `def run_kernel(...)`, joined by "; ". nullopt when the entry point is missing.
std::optional<std::string> extract_entry_signature(std::string_view text, SourceLanguage lang);

// CUDA: `guard` appears as a whole word on an #if / #ifdef / #ifndef / #elif line.
// Python: on an `if` / `elif` line or in a conditional expression (`... if GUARD else ...`).
bool guard_in_conditional(std::string_view text, std::string_view guard, SourceLanguage lang);

}  // namespace kopt::search
