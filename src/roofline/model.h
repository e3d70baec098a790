#pragma once
// The roofline with a workload model: which compute roof applies (dtype rules), the floor time, efficiency,
// the binding resource, near_peak and below_floor. Pure functions; formulas in docs/ROOFLINE.md.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/axis.h"
#include "core/result.h"
#include "roofline/ceilings.h"
#include "util/json_io.h"

namespace kopt::roofline {

// ref.py's workload_model(**dims): {"flops": N, "bytes_min": N, "dtype": "bfloat16"?} or, for work in several
// dtypes, {"flops": {"bfloat16": N, "float32": N}, "bytes_min": N}. Optionally "bytes_read_min" and
// "bytes_written_min" (both, summing to bytes_min, which may then be left out): the DRAM roof then follows
// the kernel's read/write mix (Ceilings::dram_rate).
struct WorkloadModel {
  std::map<std::string, double> flops_by_dtype;  // key "" when the model names no dtype (inferred from buffers)
  double bytes_min = 0;                          // the least DRAM traffic the computation needs, read + written
  std::optional<double> bytes_read_min, bytes_written_min;
  // bytes_read_min / bytes_min when the split is known and bytes_min > 0.
  std::optional<double> read_fraction() const;
};
Result<WorkloadModel> parse_workload_model(const util::Json& j);

struct RoofChoice {
  Roof roof;
  std::string rule;  // why this roof, in words
};
// A dtype the workload model names: float32 -> fp32 FMA, tf32 -> tf32 tensor, float64 -> fp64 FMA,
// float64_tensor -> fp64 tensor, float16/bfloat16/float8*/int8 -> that tensor-core roof.
Result<RoofChoice> roof_for_dtype(std::string_view dtype);
// An integer dtype other than int8 (int16, int32, int64, their unsigned kinds, bool): no ceiling is measured for the
// integer ALUs, so a workload model's operations in it are left out of the compute floor (the memory floor and any
// other dtype's operations place the kernel), and the floor says so (Floor::unmodelled). int8 is the tensor-core roof.
bool unmodelled_integer_dtype(std::string_view dtype);
// No dtype in the model: from the kernel's buffers' dtypes (canonical names). The lowest-precision
// floating-point dtype present decides (fp8 > float16/bfloat16 > float32 > float64); float32 stays on the
// FP32 FMA roof; integer-only kernels with int8/uint8 buffers take the int8 tensor roof.
Result<RoofChoice> infer_roof_from_buffers(const std::vector<std::string>& buffer_dtypes);

// Units that run concurrently: the compute floor is the largest of their times (the work on one unit adds up).
enum class Pipe { kFp32Cores, kFp64Cores, kTensorCores };
Pipe pipe_of(Roof r);

struct ComputeTerm {
  std::string dtype;  // as the model named it ("" when inferred)
  RoofChoice choice;
  double flops = 0;
  double peak_tflops = 0;
  CeilingSource source = CeilingSource::kMeasured;
  double time_ms = 0;  // flops / peak
};

struct Floor {
  std::vector<ComputeTerm> terms;
  double flops = 0, bytes_min = 0;
  double compute_floor_ms = 0, memory_floor_ms = 0, floor_ms = 0;
  Axis binding = Axis::kMemory;  // kCompute or kMemory: whichever floor is larger (memory on a tie)
  Roof dram_roof = Roof::kDramCopy;  // the measured mix the DRAM rate is (or is nearest to)
  double dram_gbps = 0;
  CeilingSource dram_source = CeilingSource::kMeasured;
  std::string dram_rule;               // why this rate (Ceilings::dram_rate)
  std::optional<double> read_fraction;  // from the workload model
  std::optional<double> arithmetic_intensity;  // flops / bytes_min; nullopt when bytes_min is 0
  // Operations left out of the compute floor, one line a dtype (unmodelled_integer_dtype): "int32: 1.678e+07 operations ...".
  std::vector<std::string> unmodelled;
};
Result<Floor> compute_floor(const Ceilings& c, const WorkloadModel& m, const std::vector<std::string>& buffer_dtypes);

// A timed kernel: the median and its noise (a confidence-interval half-width or the spread), both in ms.
struct TimeMeasurement {
  double median_ms = 0;
  double noise_ms = 0;
};
Status validate(const TimeMeasurement& t);

struct Efficiency {
  double achieved_tflops = 0;  // model FLOPs / measured time
  double achieved_gbps = 0;    // bytes_min / measured time (a lower bound on the real DRAM bandwidth)
  double efficiency = 0;       // floor / measured time (1 = at the floor)
  // Measured more than noise_ms below the floor's time at kCeilingMargin faster ceilings: a measurement or
  // correctness problem.
  bool below_floor = false;
  bool near_peak = false;      // efficiency >= threshold and not below_floor
};
inline constexpr double kNearPeakEfficiency = 0.80;
// The ceilings are kopt's own measurements (a triad, a copy, a read probe) and sit a few per cent under what a kernel
// can reach: on the H200 a vector add (2 : 1 mix) ran at 4523 GB/s, 104-106% of the measured triad rate of 4354 GB/s
// and under the 4.8 TB/s of the data sheet. Up to this much above the floor's efficiency is a kernel at the roof
// (near peak), not an impossibility; the speed-of-light gate (speed_of_light.h) decides what cannot be true.
inline constexpr double kCeilingMargin = 0.10;
Result<Efficiency> assess(const Floor& f, const TimeMeasurement& t, double near_peak_efficiency = kNearPeakEfficiency);

}  // namespace kopt::roofline
