#pragma once
// Element types of kernel buffers and scalars, with one table of names and sizes.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kopt::contract {

enum class DType { kF32, kF64, kF16, kBF16, kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64, kBool };

std::string_view dtype_name(DType t);               // canonical: "float32", "bfloat16", ...
std::optional<DType> parse_dtype(std::string_view);  // canonical names
std::optional<DType> parse_safetensors_dtype(std::string_view);  // "F32", "BF16", "I64", "BOOL", ...
size_t dtype_size(DType t);
bool is_float(DType t);
bool is_signed_int(DType t);

}  // namespace kopt::contract
