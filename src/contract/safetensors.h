#pragma once
// Reading and writing the safetensors format (8-byte little-endian header length, a JSON header, raw data):
// the golden data the Python harness writes and the runner reads without Python.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "contract/dtype.h"
#include "core/result.h"

namespace kopt::contract {

struct Tensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> data;  // row-major, contiguous
  int64_t numel() const;
};

using TensorMap = std::map<std::string, Tensor>;

Result<TensorMap> parse_safetensors(const std::string& bytes, const std::string& what = "safetensors file");
Result<TensorMap> read_safetensors(const std::filesystem::path& path);
std::string serialize_safetensors(const TensorMap& tensors);

}  // namespace kopt::contract
