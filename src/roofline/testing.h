#pragma once
// Test support (used by the *_test.cpp files only): ceilings with round numbers and a temporary directory.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "roofline/ceilings.h"

namespace kopt::roofline::testing {

inline Ceiling measured(double v) {
  Ceiling c;
  c.value = v;
  c.source = CeilingSource::kMeasured;
  c.note = "test";
  c.median_ms = 1.0;
  c.reps = 10;
  return c;
}

// DRAM 4000 GB/s (copy; read-only 3900), L2 10000 GB/s, fp32 60, fp64 30, tf32 400, fp16/bf16 800, fp8 1600
// TFLOP/s, int8 1600 TOP/s (all measured), fp64 tensor 60 TFLOP/s (datasheet).
inline Ceilings round_ceilings() {
  Ceilings c;
  c.key = {"GPU-00000000-1111-2222-3333-444444444444", "580.159.04", 1980, 3201};
  c.gpu_name = "NVIDIA H200";
  c.measured_at = "2026-11-30T03:00:00Z";
  c.roofs[Roof::kDramCopy] = measured(4000);
  c.roofs[Roof::kDramRead] = measured(3900);
  c.roofs[Roof::kL2Read] = measured(10000);
  c.roofs[Roof::kFp32Fma] = measured(60);
  c.roofs[Roof::kFp64Fma] = measured(30);
  c.roofs[Roof::kTf32Tensor] = measured(400);
  c.roofs[Roof::kFp16Tensor] = measured(800);
  c.roofs[Roof::kBf16Tensor] = measured(800);
  c.roofs[Roof::kFp8Tensor] = measured(1600);
  c.roofs[Roof::kInt8Tensor] = measured(1600);
  Ceiling ds;
  ds.value = 60;
  ds.source = CeilingSource::kDatasheet;
  ds.note = "H200 SXM datasheet";
  c.roofs[Roof::kFp64Tensor] = ds;
  return c;
}

// A fresh directory under the system's temporary directory, removed when the object dies.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    path = std::filesystem::temp_directory_path() / ("kopt_" + tag + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace kopt::roofline::testing
