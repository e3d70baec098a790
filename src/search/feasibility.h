#pragma once
// Which points of a space cannot be correct, learnt from the failures measured so far (docs/SEARCH.md, "The
// feasibility model"). Pure: a space and observations in, predictions out.
//
// The signal is an under-coverage failure: a candidate whose output was partly never written (the runner's
// unwritten_output, with the share of elements left at the poison pattern, 0 < f < 1). Such a kernel's threads
// reach only 1 - f of what they must: e.g. a block of 32 threads with one float4 each covers 128 of a 4096-wide row
// (f = 0.96875). Two predictions follow, each only inside a class of points (same guard values, same sentinel
// values: a parameter value <= 0 is "the launcher's own", not a size; compiler-flag dimensions are free, a flag
// changes no index arithmetic):
//  * dominance: coverage is non-decreasing in every size parameter (block sizes, items per thread, tiles), so a
//    point whose every size is <= an under-covering point's is under-covering too;
//  * product: coverage is a product of powers of the size parameters, c = C * prod s_d^a_d with a_d in {0, 1, 2},
//    so one failure says how much more is needed. Every exponent vector consistent with the observations (the
//    failures' coverages agree with each other, no point measured correct is predicted short) is kept, and a point
//    is predicted infeasible only when all of them predict it short (coverage below kProductMargin).
// Either rule is switched off in a class where the observations contradict it (a point measured correct that the
// rule calls infeasible). Failures without the signal (wrong values everywhere, crashes, nothing written at all:
// a launch that never ran) teach the model nothing, so a space without under-coverage failures is untouched.
// What it cannot catch: a constraint whose failures write every output (wrong values), coverage that falls as a
// parameter grows, and couplings between classes (a method switched on changes the class).
#include <optional>
#include <string>
#include <vector>

#include "search/space.h"

namespace kopt::search {

// One measured point as the model sees it.
struct FeasibilityObservation {
  Config config;
  bool ok = false;                           // measured correct
  std::optional<double> unwritten_fraction;  // a failure that left this share of an output unwritten
};

enum class InfeasibleBasis {
  kDominated,  // every size <= an under-covering point's
  kProduct,    // the product model predicts it short of full coverage
};
std::string_view infeasible_basis_name(InfeasibleBasis b);  // "dominated", "product"

struct InfeasiblePrediction {
  InfeasibleBasis basis = InfeasibleBasis::kDominated;
  Config because_of;                               // the under-covering observation it follows from
  double because_unwritten = 0;                    // that observation's unwritten share
  double predicted_coverage = 0;                   // the product model's most hopeful coverage (kProduct), else 0
  std::string reason(const SearchSpace& s) const;  // one line for the record
};

// Below this predicted coverage (of what the output needs) a point is predicted infeasible by the product model.
inline constexpr double kProductMargin = 0.9;

class FeasibilityModel {
 public:
  FeasibilityModel() = default;
  FeasibilityModel(const SearchSpace& space, const std::vector<FeasibilityObservation>& obs);

  // Does the model hold any signal (at least one under-coverage failure)? Without it, predict() is always nullopt.
  bool active() const { return !classes_.empty(); }
  std::optional<InfeasiblePrediction> predict(const Config& c) const;
  // What the model learnt, one line per class with under-coverage failures (for the generator's notes).
  std::vector<std::string> describe(const SearchSpace& s) const;

 private:
  struct Failure {
    Config config;
    std::vector<double> log_size;  // over the class's size dims
    double coverage = 0;           // 1 - unwritten share
  };
  struct Model {
    std::vector<int> exponent;  // per size dim
    double threshold = 0;       // a point is short under this model when exponent . log_size < threshold
  };
  struct Class {
    std::vector<int64_t> key;       // guard values and sentinel values: what must match
    std::vector<size_t> size_dims;  // the class's size dimensions (param dims holding a positive value)
    std::vector<Failure> failures;
    std::vector<std::vector<double>> ok_log_sizes;
    bool dominance = true;      // off when a point measured correct is dominated by a failure
    std::vector<Model> models;  // the consistent product models (empty: no product prediction)
  };
  std::optional<std::vector<int64_t>> class_key(const Config& c, std::vector<size_t>* size_dims) const;
  std::vector<double> log_sizes(const Config& c, const std::vector<size_t>& size_dims) const;
  void fit(Class& k) const;

  const SearchSpace* space_ = nullptr;
  std::vector<Class> classes_;
};

}  // namespace kopt::search
