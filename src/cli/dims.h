#pragma once
// Problem dimensions given on the command line as --NAME=VALUE (any identifier NAME, positive integer VALUE).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/dims.h"
#include "core/result.h"

namespace kopt::cli {

using kopt::Dims;
using kopt::format_dims;

// Parses the arguments an option parser did not recognise. Each must be --NAME=VALUE. `known_options`
// (without dashes) lets a near-miss such as --iteration=3 be reported as a mistyped option.
Result<Dims> parse_dims(const std::vector<std::string>& args, const std::vector<std::string>& known_options = {});

}  // namespace kopt::cli
