#pragma once
// A folder of JSON files, one a key: what kopt keeps of evidence it may believe again in a later run (the sanitizer's
// verdicts, the held-out shapes' runs; docs/GATES.md "Evidence kept across runs"). Each file holds the key, when and
// by which run it was made, and the value; a file whose key differs, or that cannot be read, is not found.
#include <filesystem>
#include <optional>
#include <string>

#include "core/result.h"
#include "util/json_io.h"

namespace kopt::util {

struct KeyedEntry {
  Json value;
  std::string where;  // "<file> (made <UTC> by <run dir>)": what a record of the reuse names
};
std::optional<KeyedEntry> find_keyed(const std::filesystem::path& dir, const std::string& key);
// Writes the entry atomically (the folder made if needed); an empty key keeps nothing.
Status keep_keyed(const std::filesystem::path& dir, const std::string& key, const std::string& kind, const Json& value,
                  const std::string& run_dir);

}  // namespace kopt::util
