#pragma once
// Working-set fitting (issue 18): each case's working set is estimated from the real buffer sizes of the
// contract, evaluated at the case's dims; a case above the limit is scaled down (requested vs realised dims
// recorded in the case), and a CUDA out-of-memory is retried smaller up to a limit. Pure: values in, values out.
//
// Buffer sizes come from the golden manifest made at the user's dims (contract/golden_maker.h):
//  * `shapes` buffers carry their ref.py entry as `shape_expr` (e.g. ["M", "K"] or ["K", 3]): exact at any dims;
//  * guessed buffers follow the harness's rule (the product of the two largest dims, or --ptr-size elements):
//    exact;
//  * setup() buffers have only their sizes at the user's dims: each extent is matched to the dimension(s) with
//    that value (several with one value: the largest at the case, so the estimate stays an upper bound), or to a
//    product of two dimensions, else taken as a constant. Such an estimate is marked inferred.
// bytes = numel x dtype size, summed over every buffer (inputs, outputs, in-outs: the child holds them all).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dims.h"
#include "contract/dtype.h"
#include "core/result.h"
#include "util/json_io.h"
#include "workload/matrix.h"

namespace kopt::workload {

enum class SizeMethod { kExact, kGuessedRule, kInferred, kConstant };
std::string_view size_method_name(SizeMethod m);

// numel = constant x product over factors of (the largest of the factor's dimensions at the dims).
struct Extent {
  int64_t constant = 1;
  std::vector<std::vector<std::string>> factors;  // each: one dimension, or alternatives (inferred)
};

struct BufferModel {
  std::string name;
  contract::DType dtype = contract::DType::kF32;
  Extent numel;
  SizeMethod method = SizeMethod::kExact;
};

struct WorkingSetModel {
  std::vector<BufferModel> buffers;
  bool exact() const;  // no buffer inferred
};

// From a golden manifest (its "dims" and "buffers"). Errors (exit 4) name a buffer with an unknown dtype or a
// shape_expr naming a dimension the manifest does not have.
Result<WorkingSetModel> model_from_manifest(const util::Json& manifest);

struct BufferBytes {
  std::string name;
  int64_t numel = 0, bytes = 0;
};
struct WorkingSet {
  int64_t bytes = 0;
  std::vector<BufferBytes> buffers;
  bool exact = true;
};
// The working set at `dims`. Errors when a needed dimension is missing or the size overflows 64 bits.
Result<WorkingSet> estimate(const WorkingSetModel& m, const Dims& dims);
util::Json to_json(const WorkingSet& w);

// The default --max-working-set-mb: 1/16 of the GPU's total memory (8.8 GB on a 141 GB H200). The child holds
// the buffers plus a 256 MiB L2-flush buffer; a torch reference on the GPU holds inputs, outputs and temporaries
// at least as large; compute-sanitizer's memcheck and initcheck keep shadow state per allocation; and golden data
// for every seed and case land on disk (seeds x cases x working set). 0 when the memory is unknown (no limit).
int64_t default_max_working_set_bytes(int64_t gpu_total_memory_bytes);
// --max-working-set-mb given (> 0) wins; else the default from the GPU's memory.
int64_t max_working_set_bytes(double max_working_set_mb_option, int64_t gpu_total_memory_bytes);

struct Fit {
  Dims realised;
  double factor = 1;  // the scale applied to the shrunk axes (1: unchanged)
  std::vector<std::string> axes;
  int64_t requested_bytes = 0, realised_bytes = 0;
  bool fitted() const { return factor < 1; }
};
// The largest scaling f <= 1 of the case's scaled axes (scaled_axes, scale_dims: the matrix's rounding) whose
// working set is at most `max_bytes`. Unchanged when it already fits or max_bytes <= 0 (no limit). An input
// error (exit 4) when even the smallest scaling does not fit, naming the case's bytes and the limit.
Result<Fit> fit_to_limit(const WorkingSetModel& m, const Dims& requested, int64_t max_bytes);

// Fits every case (realised dims and note updated); cases that coincide after fitting are merged (weights
// added, the first name kept, the merge noted).
Result<std::vector<Case>> fit_cases(std::vector<Case> cases, const WorkingSetModel& m, int64_t max_bytes);

// ---- Out-of-memory retries -------------------------------------------------------------------------------
// True for the ways a CUDA out-of-memory reaches kopt: the driver's CUDA_ERROR_OUT_OF_MEMORY (the child's
// cuMemAlloc), the runtime's cudaErrorMemoryAllocation (error 2, left by solve()), torch's OutOfMemoryError and
// "out of memory" (the golden-data harness).
bool is_out_of_memory(std::string_view message);

enum class OomWho { kGoldenData, kBaseline, kCandidate };
struct OomPolicy {
  int max_retries = 2;  // smaller attempts per case after the first
  double shrink = 0.5;  // each retry's working-set limit: this x the failed attempt's working set
};
struct OomDecision {
  bool retry = false;
  int64_t next_max_bytes = 0;  // fit the case's requested dims to this (fit_to_limit), then remake its golden data
  std::string reason;          // said in the run's log and recorded with the case
};
// What to do after an attempt at a case failed. Only an out-of-memory of the golden data or of the baseline
// shrinks the case (for every contender: comparisons stay at one shape); a candidate that runs out of memory
// where the baseline did not is the candidate's failure, not retried.
OomDecision decide_oom_retry(OomWho who, bool out_of_memory, int retries_done, int64_t failed_working_set_bytes,
                             const OomPolicy& policy = {});

}  // namespace kopt::workload
