#pragma once
// Golden data as the runner sees it: the signature, the manifest and one tensor file per seed.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "contract/safetensors.h"
#include "contract/signature.h"
#include "core/result.h"
#include "runner/compare.h"

namespace kopt::runner {

struct BufferSpec {
  std::string name;
  std::string role;  // input | output | inout
  contract::DType dtype = contract::DType::kF32;
  std::vector<int64_t> shape;
  int64_t nbytes = 0;
};

struct Golden {
  std::filesystem::path dir;
  contract::KernelSignature signature;
  std::vector<int> seeds;
  std::map<std::string, BufferSpec> buffers;
  std::map<std::string, double> scalars;  // exact for integers below 2^53
  Tolerance tol, approx_tol;
  bool sizes_guessed = false;
  util::Json manifest;
  // The sealed seed's token (runner/sealed.h): its file is beneath sealed_root(), which the measuring process cannot
  // open; nullopt for golden data made without one.
  std::optional<std::string> sealed;
};

// Reads DIR/signature.json and DIR/manifest.json and checks they agree (every pointer has a buffer, every
// scalar a value). Errors name what is missing.
Result<Golden> load_golden(const std::filesystem::path& dir);
Result<contract::TensorMap> load_seed(const Golden& g, int seed);

}  // namespace kopt::runner
