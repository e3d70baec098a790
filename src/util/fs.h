#pragma once
// Disk side effects: whole-file reads and atomic writes (temporary file + rename; never half a file).
#include <filesystem>
#include <string>

#include "core/result.h"

namespace kopt::util {

Result<std::string> read_file(const std::filesystem::path& path);
Status write_file_atomic(const std::filesystem::path& path, const std::string& content);
// A new, empty folder under parent (created with its parents), named by this process and a counter: where a cache
// entry is built before it is renamed into place. Errors name the folder.
Result<std::filesystem::path> make_unique_dir(const std::filesystem::path& parent);
// A file's size and modification time, "SIZE:MTIME" (what a cache keys a tool or an executable on without reading it);
// empty when it cannot be read.
std::string file_stamp(const std::filesystem::path& path);
// Directory of the running executable (from /proc/self/exe).
std::filesystem::path executable_dir();
// The first `start/relative`, `start/../relative`, ... (up to `levels` parents) that exists; empty if none.
std::filesystem::path find_upwards(const std::filesystem::path& start, const std::filesystem::path& relative, int levels = 4);
// kopt's cache folder for one kind of entry: $KOPT_CACHE_DIR/sub, else $XDG_CACHE_HOME/kopt/sub, else
// ~/.cache/kopt/sub, else <temp>/kopt-cache/sub. Not created.
std::filesystem::path kopt_cache_dir(const std::string& sub);

}  // namespace kopt::util
