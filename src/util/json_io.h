#pragma once
// The one JSON writer: every JSON kopt writes starts with a "meta" block and is written atomically.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/result.h"

namespace kopt::util {

using Json = nlohmann::json;

// Facts stamped into every JSON file's meta block. Set once per process (doctor fills GPU/tool fields).
struct MetaInfo {
  std::string gpu, driver, nvcc, ncu;
};
void set_meta_info(MetaInfo info);
const MetaInfo& meta_info();
Json make_meta(const std::string& kind);

// Writes {"meta": ..., <body fields>} atomically. `body` must be an object.
Status write_json_atomic(const std::filesystem::path& path, const std::string& kind, const Json& body);
Result<Json> read_json(const std::filesystem::path& path);

// ISO-8601 UTC timestamp ("2026-11-30T03:10:00Z").
std::string utc_now_iso();

}  // namespace kopt::util
