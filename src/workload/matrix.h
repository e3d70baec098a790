#pragma once
// The workload matrix (issue 18): the cases a candidate is checked and timed at, so a kernel tuned at one shape
// is not taken for faster where it is slower, or correct where it is wrong. Pure: dims in, cases out.
//
// Default matrix (`--workload-matrix default`): the user's dims at three scales, 0.5, 0.75 and 1.0, weighted
// 0.2, 0.3 and 0.5 (the user's own shape counts most).
//  * Which axes: the scaled axes are the (up to) three largest dimensions of at least kMinScalableDim (64);
//    ties go to the name first in alphabetical order. Smaller dimensions (head counts, radii, channels) and
//    the rest of the dimensions keep the user's value in every case.
//  * Rounding: a scaled value is rounded DOWN to a multiple of the alignment the user's value has, and is at
//    least that alignment: alignment_of(v) is the largest power of two dividing v, capped at 256 (tile sizes
//    kernels assume) and at v/4 (so the 0.5 and 0.75 cases of v stay apart). 4096 -> 2048, 3072; 1000 (8) ->
//    496, 744; 1030 (2) -> 514, 772. A kernel correct at the user's alignment stays inside it.
//  * Dedupe: cases whose dims coincide (no scalable dimension, or values too small to differ) are merged and
//    their weights added; with no scalable dimension the matrix is the user's case alone, weight 1.
// `--workload-matrix off`: the user's case alone. `--shapes FILE`: an explicit list (parse_shapes).
// Every list has weights summing to 1; the user's own dims, when they are a case, come first.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dims.h"
#include "core/result.h"
#include "util/json_io.h"

namespace kopt::workload {



enum class CaseOrigin { kUser, kMatrix, kShapesFile, kHoldoutFile, kHoldoutDerived };
std::string_view origin_name(CaseOrigin o);
std::optional<CaseOrigin> parse_origin(std::string_view name);

struct Case {
  std::string name;   // unique in its list and usable as a folder name: "full", "scale_0.75", "line3", "primes"
  Dims requested;     // what the matrix, the file or the user asked for
  Dims realised;      // what runs: `requested` unless working-set fitting scaled it down (working_set.h)
  double weight = 1;  // a list's weights sum to 1 (held-out cases: 1 each, unused)
  CaseOrigin origin = CaseOrigin::kUser;
  int line = 0;       // the shapes file's line, 0 otherwise
  std::string note;   // how it was made ("K, M, N x0.5"), and the fitting when there was one
  bool fitted() const { return realised != requested; }
};

enum class MatrixMode { kDefault, kOff };
std::string_view matrix_mode_name(MatrixMode m);
std::optional<MatrixMode> parse_matrix_mode(std::string_view name);

inline constexpr int64_t kMinScalableDim = 64;
inline constexpr int64_t kMaxAlignment = 256;
inline constexpr size_t kMaxScaledAxes = 3;
inline constexpr size_t kMaxShapesFileCases = 16;

// The axes the matrix scales (and working-set fitting shrinks): see above. Sorted by name.
std::vector<std::string> scaled_axes(const Dims& dims);
// Largest power of two dividing v, at most kMaxAlignment and at most v / 4 (at least 1).
int64_t alignment_of(int64_t v);
// v * f rounded down to a multiple of alignment_of(v), at least that alignment; f >= 1 gives v unchanged.
int64_t scale_dim(int64_t v, double f);
// `dims` with each of `axes` scaled by f (scale_dim); the others unchanged.
Dims scale_dims(const Dims& dims, const std::vector<std::string>& axes, double f);

std::vector<Case> default_matrix(const Dims& user);
std::vector<Case> user_case(const Dims& user);  // one case, weight 1
std::vector<Case> matrix_cases(MatrixMode mode, const Dims& user);

// A shapes file (--shapes / --holdout-shapes): one case per line, `NAME=VALUE ...` naming every dimension of
// the user's (and only those), optional `weight=W` (W > 0, default 1; weights are then normalised to sum 1),
// `#` starting a comment, blank lines ignored. Case k is named "line<N>" after its line. Every malformed line is
// an input error (exit 4) "FILE:LINE: what is wrong; how to fix it": a token that is not NAME=VALUE, an unknown
// dimension, a missing one, one given twice, a value that is not an integer or not positive, a bad weight, a
// case repeating an earlier line. An empty list, or more than kMaxShapesFileCases cases, is an error too.
Result<std::vector<Case>> parse_shapes(const std::string& text, const std::string& filename, const Dims& user,
                                       CaseOrigin origin = CaseOrigin::kShapesFile);
Result<std::vector<Case>> read_shapes_file(const std::filesystem::path& path, const Dims& user,
                                           CaseOrigin origin = CaseOrigin::kShapesFile);

// The cases of a run: --shapes FILE when given, else the matrix mode's.
Result<std::vector<Case>> search_cases(MatrixMode mode, const std::optional<std::filesystem::path>& shapes_file,
                                       const Dims& user);

util::Json to_json(const Case& c);
util::Json to_json(const std::vector<Case>& cases);
Result<Case> case_from_json(const util::Json& j);
Result<std::vector<Case>> cases_from_json(const util::Json& j);

}  // namespace kopt::workload
