#include "roofline/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace kopt::roofline {

namespace {

bool finite_non_negative(double v) { return std::isfinite(v) && v >= 0; }

std::string normalise_dtype(std::string_view s) {
  std::string d;
  for (char ch : s) d += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (d.rfind("torch.", 0) == 0) d = d.substr(6);
  return d;
}

Result<double> number(const util::Json& v, const std::string& what) {
  if (!v.is_number()) return input_error("workload_model: " + what + " must be a number, got " + v.dump());
  double x = v.get<double>();
  if (!finite_non_negative(x)) return input_error(fmt::format("workload_model: {} must be >= 0, got {}", what, x));
  return x;
}

}  // namespace

Result<WorkloadModel> parse_workload_model(const util::Json& j) {
  if (!j.is_object()) return input_error("workload_model must return a dict {flops, bytes_min[, dtype]}, got " + j.dump());
  const bool has_r = j.contains("bytes_read_min"), has_w = j.contains("bytes_written_min");
  if (has_r != has_w)
    return input_error(std::string("workload_model gives '") + (has_r ? "bytes_read_min" : "bytes_written_min") +
                       "' without '" + (has_r ? "bytes_written_min" : "bytes_read_min") + "': give both or neither");
  if (!j.contains("flops") || (!j.contains("bytes_min") && !has_r))
    return input_error("workload_model must return 'flops' and 'bytes_min' (or 'bytes_read_min' and "
                       "'bytes_written_min'), got " + j.dump());
  WorkloadModel m;
  if (has_r) {
    KOPT_TRY_ASSIGN(double r, number(j["bytes_read_min"], "bytes_read_min"));
    KOPT_TRY_ASSIGN(double w, number(j["bytes_written_min"], "bytes_written_min"));
    m.bytes_read_min = r;
    m.bytes_written_min = w;
  }
  if (j.contains("bytes_min")) {
    KOPT_TRY_ASSIGN(m.bytes_min, number(j["bytes_min"], "bytes_min"));
    if (has_r && std::abs(*m.bytes_read_min + *m.bytes_written_min - m.bytes_min) > 1e-6 * std::max(1.0, m.bytes_min))
      return input_error(fmt::format("workload_model: bytes_min ({}) must equal bytes_read_min + bytes_written_min "
                                     "({} + {})", m.bytes_min, *m.bytes_read_min, *m.bytes_written_min));
  } else {
    m.bytes_min = *m.bytes_read_min + *m.bytes_written_min;
  }
  const auto& f = j["flops"];
  if (f.is_object()) {
    if (j.contains("dtype")) return input_error("workload_model: give 'dtype' or per-dtype 'flops', not both");
    if (f.empty()) return input_error("workload_model: 'flops' is an empty dict");
    for (const auto& [dtype, v] : f.items()) {
      KOPT_TRY_ASSIGN(double x, number(v, "flops[" + dtype + "]"));
      m.flops_by_dtype[dtype] = x;
    }
  } else {
    KOPT_TRY_ASSIGN(double x, number(f, "flops"));
    std::string dtype;
    if (j.contains("dtype") && !j["dtype"].is_null()) {
      if (!j["dtype"].is_string()) return input_error("workload_model: 'dtype' must be a string");
      dtype = j["dtype"].get<std::string>();
    }
    m.flops_by_dtype[dtype] = x;
  }
  double total = 0;
  for (const auto& [d, x] : m.flops_by_dtype) total += x;
  if (total == 0 && m.bytes_min == 0) return input_error("workload_model: flops and bytes_min are both 0");
  return m;
}

std::optional<double> WorkloadModel::read_fraction() const {
  if (!bytes_read_min || !bytes_written_min || !(bytes_min > 0)) return std::nullopt;
  return *bytes_read_min / bytes_min;
}

Result<RoofChoice> roof_for_dtype(std::string_view dtype) {
  const std::string d = normalise_dtype(dtype);
  struct Entry {
    std::vector<std::string_view> names;
    Roof roof;
    std::string_view rule;
  };
  static const std::vector<Entry> table = {
      {{"float32", "fp32", "float"}, Roof::kFp32Fma, "float32: FP32 FMA on the CUDA cores (tf32 only when named)"},
      {{"tf32", "tensorfloat32"}, Roof::kTf32Tensor, "tf32: tensor cores"},
      {{"float64", "fp64", "double"}, Roof::kFp64Fma, "float64: FP64 FMA on the CUDA cores (name float64_tensor for DMMA)"},
      {{"float64_tensor", "fp64_tensor"}, Roof::kFp64Tensor, "float64_tensor: FP64 on the tensor cores"},
      {{"float16", "fp16", "half"}, Roof::kFp16Tensor, "float16: tensor cores"},
      {{"bfloat16", "bf16"}, Roof::kBf16Tensor, "bfloat16: tensor cores"},
      {{"float8", "fp8", "float8_e4m3fn", "float8_e4m3", "e4m3", "float8_e5m2", "e5m2"}, Roof::kFp8Tensor,
       "fp8: tensor cores"},
      {{"int8", "uint8"}, Roof::kInt8Tensor, "int8: tensor cores (TOP/s)"},
  };
  for (const auto& e : table)
    if (std::find(e.names.begin(), e.names.end(), d) != e.names.end()) return RoofChoice{e.roof, std::string(e.rule)};
  return input_error("workload_model: unknown dtype '" + std::string(dtype) +
                     "'; use float32, tf32, float64, float64_tensor, float16, bfloat16, float8_e4m3fn or int8 (int16, "
                     "int32, int64 and their unsigned kinds are counted in bytes only: no integer ALU ceiling)");
}

bool unmodelled_integer_dtype(std::string_view dtype) {
  static const std::vector<std::string_view> ints = {"int16", "int32", "int64", "uint16", "uint32", "uint64", "bool",
                                                     "int",   "short", "long",  "uint",   "i16",    "i32",    "i64"};
  const std::string d = normalise_dtype(dtype);
  return std::find(ints.begin(), ints.end(), d) != ints.end();
}

Result<RoofChoice> infer_roof_from_buffers(const std::vector<std::string>& buffer_dtypes) {
  if (buffer_dtypes.empty())
    return input_error("cannot infer the compute dtype: the kernel has no buffers; name 'dtype' in workload_model");
  static const std::vector<std::string_view> known = {"float32", "float64", "float16", "bfloat16", "int8",   "int16",
                                                      "int32",   "int64",   "uint8",   "uint16",   "uint32", "uint64",
                                                      "bool",    "float8_e4m3fn", "float8_e5m2"};
  bool has_fp8 = false, has_f16 = false, has_bf16 = false, has_f32 = false, has_f64 = false, has_i8 = false;
  for (const auto& raw : buffer_dtypes) {
    std::string d = normalise_dtype(raw);
    if (std::find(known.begin(), known.end(), d) == known.end())
      return input_error("cannot infer the compute dtype: unknown buffer dtype '" + raw + "'");
    has_fp8 |= d.rfind("float8", 0) == 0;
    has_f16 |= d == "float16";
    has_bf16 |= d == "bfloat16";
    has_f32 |= d == "float32";
    has_f64 |= d == "float64";
    has_i8 |= d == "int8" || d == "uint8";
  }
  const std::string rule = "inferred from the buffers: ";
  if (has_fp8) return RoofChoice{Roof::kFp8Tensor, rule + "an fp8 buffer -> fp8 tensor cores"};
  if (has_f16) return RoofChoice{Roof::kFp16Tensor, rule + "a float16 buffer -> fp16 tensor cores"};
  if (has_bf16) return RoofChoice{Roof::kBf16Tensor, rule + "a bfloat16 buffer -> bf16 tensor cores"};
  if (has_f32) return RoofChoice{Roof::kFp32Fma, rule + "float32 buffers -> FP32 FMA (tf32 only when the model says so)"};
  if (has_f64) return RoofChoice{Roof::kFp64Fma, rule + "float64 buffers -> FP64 FMA"};
  if (has_i8) return RoofChoice{Roof::kInt8Tensor, rule + "int8 buffers and no floating point -> int8 tensor cores"};
  std::string list;
  for (const auto& d : buffer_dtypes) list += (list.empty() ? "" : ", ") + d;
  return input_error("cannot infer the compute dtype from buffers [" + list +
                     "]: no floating-point or int8 buffer; name 'dtype' in workload_model");
}

Pipe pipe_of(Roof r) {
  switch (r) {
    case Roof::kFp32Fma: return Pipe::kFp32Cores;
    case Roof::kFp64Fma: return Pipe::kFp64Cores;
    default: return Pipe::kTensorCores;
  }
}

Result<Floor> compute_floor(const Ceilings& c, const WorkloadModel& m, const std::vector<std::string>& buffer_dtypes) {
  Floor f;
  if (!finite_non_negative(m.bytes_min)) return input_error(fmt::format("bytes_min must be >= 0, got {}", m.bytes_min));
  f.bytes_min = m.bytes_min;
  std::map<Pipe, double> pipe_ms;
  for (const auto& [dtype, flops] : m.flops_by_dtype) {
    if (!finite_non_negative(flops)) return input_error(fmt::format("flops[{}] must be >= 0, got {}", dtype, flops));
    f.flops += flops;
    if (flops == 0) continue;
    if (unmodelled_integer_dtype(dtype)) {
      f.unmodelled.push_back(fmt::format("{}: {:.4g} operations not in the compute floor (no integer ALU ceiling is "
                                         "measured; the memory floor places the kernel)", dtype, flops));
      continue;
    }
    ComputeTerm t;
    t.dtype = dtype;
    if (dtype.empty()) {
      KOPT_TRY_ASSIGN(t.choice, infer_roof_from_buffers(buffer_dtypes));
    } else {
      KOPT_TRY_ASSIGN(t.choice, roof_for_dtype(dtype));
    }
    const Ceiling* peak = c.find(t.choice.roof);
    if (!peak || !(peak->value > 0))
      return input_error("no " + std::string(roof_info(t.choice.roof).name) + " ceiling for " + c.gpu_name +
                         ": measure it (kopt roofline --ceilings-only --remeasure)");
    t.flops = flops;
    t.peak_tflops = peak->value;
    t.source = peak->source;
    t.time_ms = flops / (peak->value * 1e12) * 1e3;
    pipe_ms[pipe_of(t.choice.roof)] += t.time_ms;
    f.terms.push_back(std::move(t));
  }
  if (f.flops == 0 && f.bytes_min == 0) return input_error("the workload model has neither flops nor bytes_min");
  for (const auto& [p, ms] : pipe_ms) f.compute_floor_ms = std::max(f.compute_floor_ms, ms);
  auto dram = c.dram_rate(m.read_fraction());
  if (!dram) return input_error("no DRAM bandwidth ceiling for " + c.gpu_name);
  f.dram_roof = dram->roof;
  f.dram_gbps = dram->gbps;
  f.dram_source = dram->source;
  f.dram_rule = dram->rule;
  f.read_fraction = dram->read_fraction;
  f.memory_floor_ms = f.bytes_min / (f.dram_gbps * 1e9) * 1e3;
  f.floor_ms = std::max(f.compute_floor_ms, f.memory_floor_ms);
  f.binding = f.compute_floor_ms > f.memory_floor_ms ? Axis::kCompute : Axis::kMemory;
  if (f.bytes_min > 0) f.arithmetic_intensity = f.flops / f.bytes_min;
  return f;
}

Status validate(const TimeMeasurement& t) {
  if (!std::isfinite(t.median_ms) || t.median_ms <= 0)
    return input_error(fmt::format("the measured time must be > 0 ms, got {}", t.median_ms));
  if (!finite_non_negative(t.noise_ms))
    return input_error(fmt::format("the measurement noise must be >= 0 ms, got {}", t.noise_ms));
  return ok_status();
}

Result<Efficiency> assess(const Floor& f, const TimeMeasurement& t, double near_peak_efficiency) {
  KOPT_TRY(validate(t));
  if (!(near_peak_efficiency > 0 && near_peak_efficiency <= 1))
    return input_error(fmt::format("the near-peak threshold must be in (0, 1], got {}", near_peak_efficiency));
  if (!(f.floor_ms > 0)) return input_error("the floor time is 0: the workload model has no work");
  Efficiency e;
  const double s = t.median_ms * 1e-3;
  e.achieved_tflops = f.flops / s / 1e12;
  e.achieved_gbps = f.bytes_min / s / 1e9;
  e.efficiency = f.floor_ms / t.median_ms;
  e.below_floor = f.floor_ms / (1 + kCeilingMargin) - t.median_ms > t.noise_ms;
  e.near_peak = !e.below_floor && e.efficiency >= near_peak_efficiency;
  return e;
}

}  // namespace kopt::roofline
