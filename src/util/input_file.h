#pragma once
// Files a user names on the command line (a kernel, a reference): errors that say what the path is instead.
#include <filesystem>
#include <string>

#include "core/result.h"

namespace kopt::util {

// `what` ("kernel file") names the role: an input error when `path` is not a regular file (not found, a directory,
// something else), saying which.
Status require_regular_file(const std::filesystem::path& path, const std::string& what);
// A source file's text: also an input error when it is binary (holds NUL bytes).
Result<std::string> read_text_file(const std::filesystem::path& path, const std::string& what);

}  // namespace kopt::util
