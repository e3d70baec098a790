#include "search/method.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace kopt::search {

namespace {
template <typename E, size_t N>
std::optional<E> lookup(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) {
  for (const auto& [e, name] : table)
    if (name == s) return e;
  return std::nullopt;
}
template <typename E, size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [k, name] : table)
    if (k == e) return name;
  return "?";
}

constexpr std::array<std::pair<Numerics, std::string_view>, 3> kNumerics = {{
    {Numerics::kBitwisePreserving, "bitwise_preserving"},
    {Numerics::kReorderedEquivalent, "reordered_equivalent"},
    {Numerics::kToleranceChanging, "tolerance_changing"},
}};
constexpr std::array<std::pair<NumericsMode, std::string_view>, 3> kModes = {{
    {NumericsMode::kStrict, "strict"},
    {NumericsMode::kReference, "reference"},
    {NumericsMode::kApproximate, "approximate"},
}};
constexpr std::array<std::pair<Backend, std::string_view>, 3> kBackends = {{
    {Backend::kCuda, "cuda"},
    {Backend::kCutlass, "cutlass"},
    {Backend::kTriton, "triton"},
}};
constexpr std::array<std::pair<CompareOp, std::string_view>, 4> kOps = {{
    {CompareOp::kGreater, ">"},
    {CompareOp::kLess, "<"},
    {CompareOp::kGreaterEqual, ">="},
    {CompareOp::kLessEqual, "<="},
}};
}  // namespace

std::string_view numerics_name(Numerics n) { return name_of(kNumerics, n); }
std::string_view numerics_mode_name(NumericsMode m) { return name_of(kModes, m); }
std::string_view backend_name(Backend b) { return name_of(kBackends, b); }
std::string_view op_text(CompareOp op) { return name_of(kOps, op); }
std::optional<Numerics> parse_numerics(std::string_view s) { return lookup(kNumerics, s); }
std::optional<NumericsMode> parse_numerics_mode(std::string_view s) { return lookup(kModes, s); }
std::optional<Backend> parse_backend(std::string_view s) { return lookup(kBackends, s); }
std::optional<CompareOp> parse_op(std::string_view s) { return lookup(kOps, s); }

bool numerics_allows(NumericsMode mode, Numerics n) {
  switch (mode) {
    case NumericsMode::kStrict: return n == Numerics::kBitwisePreserving;
    case NumericsMode::kReference: return n != Numerics::kToleranceChanging;
    case NumericsMode::kApproximate: return true;
  }
  return false;
}

std::string guard_macro(std::string_view method_id) {
  std::string s = "KOPT_";
  for (char c : method_id) s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::optional<std::string> guard_method(std::string_view macro) {
  constexpr std::string_view prefix = "KOPT_";
  if (macro.size() <= prefix.size() || macro.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string id;
  for (char c : macro.substr(prefix.size())) id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return id;
}

bool EvidenceItem::holds(double v) const {
  switch (op) {
    case CompareOp::kGreater: return v > value;
    case CompareOp::kLess: return v < value;
    case CompareOp::kGreaterEqual: return v >= value;
    case CompareOp::kLessEqual: return v <= value;
  }
  return false;
}

bool Method::supports(Backend b) const { return std::find(backends.begin(), backends.end(), b) != backends.end(); }

std::vector<std::string> Method::flags_for(std::optional<int64_t> value) const {
  std::vector<std::string> out;
  for (std::string f : flags) {
    if (value) {
      auto pos = f.find("{value}");
      if (pos != std::string::npos) f.replace(pos, 7, std::to_string(*value));
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace kopt::search
