#pragma once
// The determinism check (issue 18): a finalist run twice on the same inputs must give the same outputs, bitwise
// in strict numerics, within the tolerance otherwise; outputs that differ beyond that are nondeterministic, the
// sign of a race or of reading uninitialised memory. Pure: two sets of output tensors in, a verdict out. Run A
// stands as the expected side of the runner's own comparison (runner/compare.h), so "within the tolerance"
// means what it means for correctness.
#include <string>
#include <vector>

#include "contract/safetensors.h"
#include "core/result.h"
#include "runner/compare.h"
#include "util/json_io.h"

namespace kopt::loop {

enum class DeterminismVerdict {
  kBitwiseEqual,      // every output identical, bit for bit
  kWithinTolerance,   // some output differs, within the tolerance (not strict numerics): reported, accepted
  kNondeterministic,  // differs beyond the tolerance, or at all in strict numerics: the finalist is rejected
  kIncomparable       // the two runs' outputs do not match in names, dtypes or shapes (a measuring bug)
};
std::string_view determinism_name(DeterminismVerdict v);
std::string_view describe(DeterminismVerdict v);

struct DeterminismResult {
  DeterminismVerdict verdict = DeterminismVerdict::kIncomparable;
  std::string reason;
  util::Json outputs = util::Json::object();  // per output: the comparison of run B against run A
  bool rejects() const { return verdict == DeterminismVerdict::kNondeterministic; }
};

// The outputs are the tensors named "out.<name>" when there are any (a golden-style file), else every tensor.
DeterminismResult judge_determinism(const contract::TensorMap& run_a, const contract::TensorMap& run_b, bool strict,
                                    runner::Tolerance tol);
// The same over two safetensors files' bytes (contract/safetensors.h). Errors: unreadable bytes.
Result<DeterminismResult> judge_determinism_bytes(const std::string& run_a, const std::string& run_b, bool strict,
                                                  runner::Tolerance tol);
util::Json to_json(const DeterminismResult& r);

}  // namespace kopt::loop
