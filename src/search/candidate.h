#pragma once
// A candidate kernel as plain data: which source, with which flags and macro values, claiming which
// methods. The compile and SASS stages consume it as is; its content hash identifies it so a candidate
// already measured is never measured again.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "search/space.h"
#include "util/json_io.h"

namespace kopt::search {

struct Candidate {
  std::string id;                             // short, unique within a run ("i2c3": iteration 2, candidate 3)
  std::filesystem::path source;               // the .cu / .py file
  std::vector<std::string> flags;             // extra compiler flags (CUDA/CUTLASS), in order
  std::map<std::string, std::string> defines; // CUDA/CUTLASS: -DNAME=VALUE (params and KOPT_<ID> guards)
  std::map<std::string, int64_t> constexprs;  // Triton: tl.constexpr arguments (params and KOPT_<ID> guards)
  std::map<std::string, int64_t> launch;      // Triton: num_warps, num_stages
  std::map<std::string, int64_t> params;      // every parameter value, whatever its kind
  std::map<std::string, bool> guards;         // method id -> guard on (methods the kernel can toggle)
  std::vector<std::string> methods;           // the methods this candidate claims (sorted)
  std::vector<std::string> not_ablatable;     // claimed methods without a usable guard
  std::string origin;                         // "baseline", "builtin" or "external"
  std::optional<Config> config;               // its point in the search space, when it has one
  std::string content_hash;                   // candidate_hash(source text, flags, defines, constexprs, launch)
};

std::string candidate_hash(const std::string& source_text, const Candidate& c);

// The candidate a point of the space describes (all params and guards set explicitly), with its hash.
Candidate candidate_from_config(const SearchSpace& space, const Registry& reg, const Config& config,
                                const std::filesystem::path& source, const std::string& source_text,
                                const std::string& origin);

util::Json to_json(const Candidate& c);

}  // namespace kopt::search
