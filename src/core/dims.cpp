#include "core/dims.h"

namespace kopt {

std::string format_dims(const Dims& dims) {
  std::string out;
  for (const auto& [k, v] : dims) {
    if (!out.empty()) out += ' ';
    out += k + "=" + std::to_string(v);
  }
  return out;
}

}  // namespace kopt
