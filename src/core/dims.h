#pragma once
// Problem dimensions: a name (an identifier) to a positive integer value, e.g. M=4096. Every layer uses them
// (the contract evaluates buffer shapes with them, the pipeline and the loop carry them); the command line
// parses them (cli/dims.h).
#include <cstdint>
#include <map>
#include <string>

namespace kopt {

using Dims = std::map<std::string, int64_t>;

std::string format_dims(const Dims& dims);  // "M=4096 N=4096"

}  // namespace kopt
