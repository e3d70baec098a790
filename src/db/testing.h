#pragma once
// Test support (used by the *_test.cpp files only): a filled-in record and a fresh database path.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "db/record.h"

namespace kopt::db::testing {

inline Record sample_record(const Dims& dims = {{"M", 4096}, {"N", 4096}, {"K", 4096}}, int64_t tile = 64) {
  Record r;
  r.key.kernel_hash = "0123456789abcdef0123456789abcdef";
  r.key.config = {{"params", {{"TILE", tile}, {"UNROLL", 2}}}, {"guards", {{"vec4", true}}}};
  r.key.dims = dims;
  r.key.dtypes = {"float32", "float32", "float32"};
  r.key.gpu_model = "NVIDIA H200";
  r.key.driver_version = "580.95.05";
  r.key.nvcc_version = "13.0.88";
  r.key.compile_flags = {"-arch=sm_90", "-O3"};
  r.key.timing_method = "blocking";
  r.key.l2_mode = "cold";
  r.key.measure_mode = "paired";
  r.key.kopt_version = "0.1.0";
  r.kernel_path = "examples/sgemm_tunable/kernel.cu";
  r.source = Source::kOptimize;
  r.verdict = Verdict::kCorrect;
  r.run_status = "ok";
  r.median_ms = 1.25;
  r.ci95_low_ms = 1.2;
  r.ci95_high_ms = 1.3;
  r.samples_ms = {1.2, 1.25, 1.3};
  r.resources = util::Json::array({{{"name", "_Z4gemmPKfS0_Pfiii"},
                                    {"registers", 128},
                                    {"shared_bytes", 32768},
                                    {"spill_store_bytes", 0},
                                    {"spill_load_bytes", 0}}});
  r.run_dir = "kopt_runs/run_20261203_170000";
  return r;
}

// A database path of its own for each test (removed first, with its WAL files).
inline std::filesystem::path fresh_db(const std::string& name) {
  std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("kopt_db_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir / "results.sqlite3";
}

// fresh_db's path, its folder removed when the test ends.
struct ScratchDb {
  explicit ScratchDb(const std::string& name) : path(fresh_db(name)) {}
  ~ScratchDb() {
    std::error_code ec;
    std::filesystem::remove_all(path.parent_path(), ec);
  }
  ScratchDb(const ScratchDb&) = delete;
  ScratchDb& operator=(const ScratchDb&) = delete;
  const std::filesystem::path path;
};

}  // namespace kopt::db::testing
