#pragma once
// Golden data as the runner sees it: the signature, the manifest and one tensor file per seed.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "contract/safetensors.h"
#include "contract/signature.h"
#include "core/result.h"
#include "runner/compare.h"

namespace kopt::runner {

// A buffer's role in solve() (the manifest's "role": input | output | inout).
enum class BufferRole { kInput, kOutput, kInOut };
std::string_view role_name(BufferRole r);
std::optional<BufferRole> parse_role(std::string_view name);
inline bool is_read(BufferRole r) { return r != BufferRole::kOutput; }    // solve() reads it: input or inout
inline bool is_written(BufferRole r) { return r != BufferRole::kInput; }  // solve() writes it: output or inout

struct BufferSpec {
  std::string name;
  BufferRole role = BufferRole::kInput;
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
