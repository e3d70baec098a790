#pragma once
// Paths for tests that work both in the build tree and in a copied tree on a GPU machine: the kopt binary
// beside the test binary, and tests/data found upwards from it (falling back to the configured paths).
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/process.h"

namespace kopt::testing_support {

// The kopt binary beside the test binary, else the one this build configured (test_support.cpp).
std::string kopt_binary();

// A tool path that names an executable file (find_nvcc() and friends return "" when nothing is found).
inline bool executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

// nvcc and cuobjdump both here: what the compile and SASS tests need (they skip otherwise).
inline bool sass_tools_present() {
  return executable(toolchain::find_nvcc()) && executable(toolchain::find_cuobjdump());
}

// tests/data found upwards from the test binary, else the configured source tree's (test_support.cpp).
std::string test_data_dir();

// Whether a name under ::testing::TempDir() is one the test process `pid` made: "kopt..." with "_<pid>" ending it or
// followed by '.' or '_' ("kopt_loop_race_12345", "kopt_gates_shapes_12345.txt"). Each test process removes its own
// when it ends (test_support.cpp).
bool made_by_process(std::string_view name, long pid);

// The source tree: the folder holding tests/data (test_data_dir()'s grandparent).
std::string source_dir();

// The build directory and the cmake this build was configured with, for the `cmake --install` test; build_dir()
// is empty on a copied tree (a GPU machine) where that directory does not exist.
std::string build_dir();
std::string cmake_command();

// Builds tests/data/triton/NAME.cu into OUT_DIR/NAME.cubin with nvcc -cubin (a stand-in for a cubin Triton
// writes: one extern "C" kernel). Returns the path; the process result says whether it worked.
inline std::filesystem::path compile_test_cubin(const std::string& name, const std::filesystem::path& out_dir,
                                                util::ProcessResult* result = nullptr) {
  std::filesystem::path out = out_dir / (name + ".cubin");
  auto r = util::run_process({{toolchain::find_nvcc(), "-cubin", "-arch=sm_90", "-o", out.string(),
                               test_data_dir() + "/triton/" + name + ".cu"},
                              "", {}, 300});
  if (result) *result = r;
  return out;
}

}  // namespace kopt::testing_support
