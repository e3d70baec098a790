#pragma once
// One optimization method of the registry (data/methods.json) and the small enums it uses. Plain data.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/axis.h"
#include "sass/signature.h"

namespace kopt::search {

// How a method changes the kernel's results.
enum class Numerics {
  kBitwisePreserving,    // the same bits as before
  kReorderedEquivalent,  // the same maths, floating-point operations reassociated (results differ in ulps)
  kToleranceChanging,    // approximations or lower precision: only acceptable under a looser tolerance
};
// The user's numerics mode (--numerics-mode). Which method kinds each mode admits: see numerics_allows.
enum class NumericsMode { kStrict, kReference, kApproximate };
enum class Backend { kCuda, kCutlass, kTriton };
enum class CompareOp { kGreater, kLess, kGreaterEqual, kLessEqual };

std::string_view numerics_name(Numerics n);        // "bitwise_preserving", ...
std::string_view numerics_mode_name(NumericsMode m);  // "strict", "reference", "approximate"
std::string_view backend_name(Backend b);          // "cuda", "cutlass", "triton"
std::string_view op_text(CompareOp op);            // ">", "<", ">=", "<="
std::optional<Numerics> parse_numerics(std::string_view s);
std::optional<NumericsMode> parse_numerics_mode(std::string_view s);
std::optional<Backend> parse_backend(std::string_view s);
std::optional<CompareOp> parse_op(std::string_view s);

// strict: bitwise_preserving only (the output must not move at all).
// reference: also reordered_equivalent (the reference tolerance absorbs reassociation).
// approximate: everything, tolerance_changing included.
bool numerics_allows(NumericsMode mode, Numerics n);

// The macro that toggles a method in a kernel: "KOPT_" + the id in upper case.
std::string guard_macro(std::string_view method_id);
// Its inverse: "KOPT_VECTORIZED_ACCESS" -> "vectorized_access"; nullopt for a name that is not a guard macro.
std::optional<std::string> guard_method(std::string_view macro);

struct EvidenceItem {
  std::string metric;  // a real Nsight Compute metric name, e.g. dram__throughput.avg.pct_of_peak_sustained_elapsed
  CompareOp op = CompareOp::kGreater;
  double value = 0;
  std::string why;     // one sentence: what the reading says about the kernel
  bool holds(double metric_value) const;
};

struct Relations {
  std::vector<std::string> conflicts;  // never on together (symmetric, whichever side declares it)
  std::vector<std::string> requires_ids;  // must be on too ("requires" in the JSON)
  std::vector<std::string> subsumes;   // this method already does what these do: picking it makes them moot
};

// A compiler-flag method whose flag takes a value: one of `values` is chosen by the search and
// substituted for "{value}" in the method's flags (e.g. "-maxrregcount={value}").
struct FlagParam {
  std::string name;
  std::vector<int64_t> values;
};

struct Method {
  std::string id;  // snake_case, unique
  std::string name;
  Axis axis = Axis::kMemory;
  std::string description;
  std::vector<EvidenceItem> evidence;  // any one that holds calls for the method
  Numerics numerics = Numerics::kBitwisePreserving;
  int min_arch = 80;  // sm_XY as XY*1 (80, 86, 89, 90)
  std::vector<Backend> backends;
  sass::Signature sass;
  Relations relations;
  std::vector<std::string> flags;  // non-empty: a compiler-flag method kopt can apply to any kernel
  std::optional<FlagParam> flag_param;

  bool is_flag_method() const { return !flags.empty(); }
  bool supports(Backend b) const;
  // The flags for a chosen value (flag_param methods) or as written.
  std::vector<std::string> flags_for(std::optional<int64_t> value) const;
};

}  // namespace kopt::search
