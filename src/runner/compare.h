#pragma once
// Comparing a kernel's output with the expected output: pure, over raw bytes of one dtype.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "contract/dtype.h"
#include "util/json_io.h"

namespace kopt::runner {

struct Tolerance {
  double atol = 0, rtol = 0;
};

struct CompareResult {
  bool ok = false;
  int64_t numel = 0;
  int64_t mismatches = 0;         // elements failing |a-e| <= atol + rtol*|e| (NaN/Inf handled explicitly)
  int64_t nan_or_inf_mismatches = 0;
  int64_t still_poisoned = 0;     // elements bitwise equal to the poison pattern: never written
  bool bitwise_equal = false;
  double max_abs_err = 0;         // over finite pairs
  double max_rel_err = 0;         // |a-e| / |e| over finite pairs with e != 0
  double rel_l2_err = 0;          // ||a-e|| / ||e|| (0 when both are 0)
  int64_t first_bad_index = -1;   // flat, row-major
  std::vector<int64_t> first_bad_coords;
  double expected_at_first_bad = 0, actual_at_first_bad = 0;
  std::string summary() const;    // one line for tables
};

// Decodes element i of a buffer as double (fp16/bf16 converted exactly).
double element_as_double(contract::DType t, const unsigned char* data, int64_t i);

// The byte the runner fills outputs with before each call: 0xFF (NaN for every float type), 0xA5 for integers.
unsigned char poison_byte(contract::DType t);

CompareResult compare(contract::DType t, const std::vector<int64_t>& shape, const unsigned char* expected,
                      const unsigned char* actual, int64_t numel, Tolerance tol);

util::Json to_json(const CompareResult& c);

// The share of an output never written, read back from a failure's message: the "MISMATCH <bad>/<numel> elements"
// and "<n> elements never written" that CompareResult::summary() and the judge's summary (runner/sealed.cpp) write
// (the message of an unwritten_output run, whatever the path it took). nullopt: the message says neither.
std::optional<double> unwritten_share(std::string_view message);

// Default tolerances by dtype (docs/CONTRACT.md).
Tolerance default_tolerance(contract::DType t);

}  // namespace kopt::runner
