#include "contract/safetensors.h"

#include <cstring>

#include "util/fs.h"
#include "util/json_io.h"

namespace kopt::contract {

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

Result<TensorMap> parse_safetensors(const std::string& bytes, const std::string& what) {
  if (bytes.size() < 8) return input_error(what + ": too short for a safetensors file");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  if (header_len > bytes.size() - 8) return input_error(what + ": header length exceeds the file");
  util::Json header;
  try {
    header = util::Json::parse(bytes.substr(8, header_len));
  } catch (const std::exception& e) {
    return input_error(what + ": bad JSON header: " + e.what());
  }
  const size_t base = 8 + header_len;
  const size_t data_len = bytes.size() - base;
  TensorMap out;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const auto& v = it.value();
    Tensor t;
    auto dt = parse_safetensors_dtype(v.value("dtype", std::string()));
    if (!dt) return input_error(what + ": tensor '" + it.key() + "' has an unsupported dtype");
    t.dtype = *dt;
    for (const auto& d : v.at("shape")) t.shape.push_back(d.get<int64_t>());
    auto offs = v.at("data_offsets");
    size_t b = offs.at(0).get<size_t>(), e = offs.at(1).get<size_t>();
    if (b > e || e > data_len) return input_error(what + ": tensor '" + it.key() + "' points outside the file");
    if (static_cast<size_t>(t.numel()) * dtype_size(t.dtype) != e - b)
      return input_error(what + ": tensor '" + it.key() + "' size does not match its shape");
    t.data.resize(e - b);
    if (e > b) std::memcpy(t.data.data(), bytes.data() + base + b, e - b);
    out[it.key()] = std::move(t);
  }
  return out;
}

Result<TensorMap> read_safetensors(const std::filesystem::path& path) {
  KOPT_TRY_ASSIGN(std::string bytes, util::read_file(path));
  return parse_safetensors(bytes, path.string());
}

std::string serialize_safetensors(const TensorMap& tensors) {
  static const char* st_names[] = {"F32", "F64", "F16", "BF16", "I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64", "BOOL"};
  util::Json header = util::Json::object();
  size_t offset = 0;
  for (const auto& [name, t] : tensors) {
    header[name] = {{"dtype", st_names[static_cast<int>(t.dtype)]}, {"shape", t.shape},
                    {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string h = header.dump();
  while ((h.size() + 8) % 8 != 0) h += ' ';
  std::string out(8, '\0');
  uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += h;
  for (const auto& [name, t] : tensors) out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  return out;
}

}  // namespace kopt::contract
