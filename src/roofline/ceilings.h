#pragma once
// The device's ceilings: what the GPU can do, each with where the number came from (measured | datasheet).
// Pure data and pure functions: measuring and caching live in roofline/measure.h.
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "util/json_io.h"

namespace kopt::roofline {

// Every ceiling kopt knows. Bandwidths are in GB/s (1e9 bytes/s); compute in TFLOP/s (1e12 FLOP/s; TOP/s for
// int8). A FLOP is one multiply or one add: an FMA counts 2.
enum class Roof {
  kDramCopy,    // device copy (1 read : 1 write), bytes read + written
  kDramRead,    // read-only reduction
  kDramTriad,   // dst = a + b (2 reads : 1 write)
  kDramWrite,   // write-only fill
  kL2Read,      // repeated reads of a buffer a quarter of the L2's size
  kFp32Fma,     // FP32 FMA on the CUDA cores
  kFp64Fma,     // FP64 FMA on the CUDA cores
  kFp64Tensor,  // FP64 on the tensor cores (DMMA), cuBLASLt DGEMM
  kTf32Tensor,  // cuBLASLt GEMMs on the tensor cores:
  kFp16Tensor,
  kBf16Tensor,
  kFp8Tensor,   // e4m3
  kInt8Tensor,
};
enum class RoofKind { kBandwidth, kCompute };

struct RoofInfo {
  Roof roof;
  std::string_view name;   // stable, used in JSON and by the probe: "dram_copy", "bf16_tensor", ...
  std::string_view unit;   // "GB/s", "TFLOP/s", "TOP/s"
  RoofKind kind;
  std::string_view label;  // for people: "DRAM copy", "bf16 tensor"
};
inline constexpr std::array<RoofInfo, 13> kRoofTable = {{
    {Roof::kDramCopy, "dram_copy", "GB/s", RoofKind::kBandwidth, "DRAM copy"},
    {Roof::kDramRead, "dram_read", "GB/s", RoofKind::kBandwidth, "DRAM read"},
    {Roof::kDramTriad, "dram_triad", "GB/s", RoofKind::kBandwidth, "DRAM triad"},
    {Roof::kDramWrite, "dram_write", "GB/s", RoofKind::kBandwidth, "DRAM write"},
    {Roof::kL2Read, "l2_read", "GB/s", RoofKind::kBandwidth, "L2 read"},
    {Roof::kFp32Fma, "fp32_fma", "TFLOP/s", RoofKind::kCompute, "fp32 FMA"},
    {Roof::kFp64Fma, "fp64_fma", "TFLOP/s", RoofKind::kCompute, "fp64 FMA"},
    {Roof::kFp64Tensor, "fp64_tensor", "TFLOP/s", RoofKind::kCompute, "fp64 tensor"},
    {Roof::kTf32Tensor, "tf32_tensor", "TFLOP/s", RoofKind::kCompute, "tf32 tensor"},
    {Roof::kFp16Tensor, "fp16_tensor", "TFLOP/s", RoofKind::kCompute, "fp16 tensor"},
    {Roof::kBf16Tensor, "bf16_tensor", "TFLOP/s", RoofKind::kCompute, "bf16 tensor"},
    {Roof::kFp8Tensor, "fp8_tensor", "TFLOP/s", RoofKind::kCompute, "fp8 tensor"},
    {Roof::kInt8Tensor, "int8_tensor", "TOP/s", RoofKind::kCompute, "int8 tensor"},
}};
const RoofInfo& roof_info(Roof r);
std::optional<Roof> parse_roof(std::string_view name);

enum class CeilingSource { kMeasured, kDatasheet };
std::string_view describe(CeilingSource s);  // "measured", "datasheet"

struct Ceiling {
  double value = 0;  // in roof_info(roof).unit
  CeilingSource source = CeilingSource::kMeasured;
  std::string note;  // how it was measured, or which datasheet
  // Measured only: the timing behind the value (median over reps, with min and max).
  std::optional<double> median_ms, min_ms, max_ms;
  int reps = 0;
  bool operator==(const Ceiling&) const = default;
};

// What invalidates a measurement: another GPU, another driver, other clocks.
struct CeilingsKey {
  std::string uuid;            // "GPU-xxxxxxxx-..."
  std::string driver_version;  // the display driver ("580.159.04") when readable, else the CUDA driver ("13.0")
  int sm_clock_max_mhz = 0;    // the driver's max clocks
  int mem_clock_max_mhz = 0;
  std::string probe_hash;      // the probe's source: a changed probe re-measures
  bool operator==(const CeilingsKey&) const = default;
};
// "uuid GPU-..., driver 580.159.04 -> 580.95.05" style: what differs between two keys (empty when equal).
std::string describe_key_change(const CeilingsKey& stored, const CeilingsKey& now);

// The DRAM mixes the probe measures, by the share of their bytes that are reads.
struct DramMixPoint {
  Roof roof;
  double read_fraction;
};
inline constexpr std::array<DramMixPoint, 4> kDramMixes = {{
    {Roof::kDramWrite, 0.0}, {Roof::kDramCopy, 0.5}, {Roof::kDramTriad, 2.0 / 3.0}, {Roof::kDramRead, 1.0}}};

// The DRAM rate a roofline uses for one kernel, and why.
struct DramRate {
  Roof roof = Roof::kDramRead;  // the measured mix it is (or is nearest to)
  double gbps = 0;
  CeilingSource source = CeilingSource::kMeasured;
  std::optional<double> read_fraction;  // the kernel's, when its workload model gives it
  std::string rule;                     // in words, with the figures
};

struct Ceilings {
  CeilingsKey key;
  std::string gpu_name;
  std::string measured_at;                // ISO-8601 UTC of the measurement (or of the datasheet fallback)
  std::map<Roof, Ceiling> roofs;
  std::map<Roof, std::string> skipped;    // roofs the probe could not measure, with its reason
  std::vector<std::string> warnings;      // e.g. why the datasheet was used
  util::Json probe = util::Json::object();  // the probe's device, clocks_seen and config blocks, for the record
  bool operator==(const Ceilings&) const = default;

  const Ceiling* find(Roof r) const;
  // The highest DRAM rate known (any mix): the roof when a kernel's read/write mix is unknown, since a floor
  // must be a lower bound on time. Measured rates win over datasheet ones. Nullopt when none is known.
  std::optional<Roof> dram_roof() const;
  // The DRAM rate for a kernel of which `read_fraction` (0..1) of the bytes are reads (docs/ROOFLINE.md):
  // a measured mix's own rate, or between two measured mixes, interpolated linearly in time per byte; outside
  // the measured mixes, or with no fraction, the highest rate (dram_roof): HBM is not monotonic in the mix
  // (on the H200 write-only and read-only streams both beat a copy), so nothing is extrapolated. Nullopt
  // when no DRAM rate is known.
  std::optional<DramRate> dram_rate(std::optional<double> read_fraction) const;
};

// Published peaks of the GPUs kopt knows, matched on the device name ("NVIDIA H200", "NVIDIA H100 80GB HBM3").
struct Datasheet {
  std::string label;  // "H200 SXM datasheet"
  std::map<Roof, double> values;
};
std::optional<Datasheet> datasheet_for(std::string_view gpu_name);
// Fills every roof `c` lacks from the datasheet, labelled source=datasheet. Returns the roofs it filled.
std::vector<Roof> fill_from_datasheet(Ceilings& c, const Datasheet& d);
// Ceilings from the datasheet alone (the fallback when nothing could be measured).
Ceilings datasheet_ceilings(const Datasheet& d, const CeilingsKey& key, std::string gpu_name, std::string when);

util::Json to_json(const Ceilings& c);
Result<Ceilings> ceilings_from_json(const util::Json& j);
std::string format_text(const Ceilings& c);

}  // namespace kopt::roofline
