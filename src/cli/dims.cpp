#include "cli/dims.h"

#include <charconv>

#include "util/strings.h"

namespace kopt::cli {

Result<Dims> parse_dims(const std::vector<std::string>& args, const std::vector<std::string>& known_options) {
  Dims dims;
  for (const auto& arg : args) {
    if (!util::starts_with(arg, "--")) {
      return input_error("unexpected argument '" + arg + "': dimensions are given as --NAME=VALUE (e.g. --M=4096)");
    }
    auto eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    for (const auto& opt : known_options) {
      if (name != opt && name.size() > 3 && util::edit_distance(name, opt) <= 2) {
        return input_error("unknown option '--" + name + "': did you mean '--" + opt + "'?");
      }
    }
    if (eq == std::string::npos) {
      return input_error("unknown option '" + arg + "' (a dimension needs a value: --" + name + "=VALUE)");
    }
    if (!util::is_identifier(name)) {
      return input_error("bad dimension name '" + name + "' in '" + arg +
                         "': a name is an identifier (letters, digits, _; not starting with a digit)");
    }
    std::string value = arg.substr(eq + 1);
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
      if (ec == std::errc::result_out_of_range)
        return input_error("dimension " + name + "=" + value + " is too large for a 64-bit integer");
      return input_error("dimension " + name + "='" + value + "' is not an integer (write --" + name + "=4096)");
    }
    if (v <= 0) return input_error("dimension " + name + "=" + value + " must be positive");
    if (dims.count(name)) return input_error("dimension " + name + " is given twice");
    dims[name] = v;
  }
  return dims;
}

}  // namespace kopt::cli
