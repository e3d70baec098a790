#include "contract/dtype.h"

#include <array>

namespace kopt::contract {

namespace {
struct Row {
  DType t;
  std::string_view name, st;
  size_t size;
};
constexpr std::array<Row, 13> kTable = {{
    {DType::kF32, "float32", "F32", 4},   {DType::kF64, "float64", "F64", 8},  {DType::kF16, "float16", "F16", 2},
    {DType::kBF16, "bfloat16", "BF16", 2}, {DType::kI8, "int8", "I8", 1},       {DType::kI16, "int16", "I16", 2},
    {DType::kI32, "int32", "I32", 4},     {DType::kI64, "int64", "I64", 8},    {DType::kU8, "uint8", "U8", 1},
    {DType::kU16, "uint16", "U16", 2},    {DType::kU32, "uint32", "U32", 4},   {DType::kU64, "uint64", "U64", 8},
    {DType::kBool, "bool", "BOOL", 1},
}};
const Row& row(DType t) { return kTable[static_cast<size_t>(t)]; }
}  // namespace

std::string_view dtype_name(DType t) { return row(t).name; }
size_t dtype_size(DType t) { return row(t).size; }
std::optional<DType> parse_dtype(std::string_view s) {
  for (const auto& r : kTable)
    if (r.name == s) return r.t;
  return std::nullopt;
}
std::optional<DType> parse_safetensors_dtype(std::string_view s) {
  for (const auto& r : kTable)
    if (r.st == s) return r.t;
  return std::nullopt;
}
bool is_float(DType t) { return t == DType::kF32 || t == DType::kF64 || t == DType::kF16 || t == DType::kBF16; }
bool is_signed_int(DType t) { return t == DType::kI8 || t == DType::kI16 || t == DType::kI32 || t == DType::kI64; }

}  // namespace kopt::contract
