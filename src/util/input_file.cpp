#include "util/input_file.h"

#include "util/fs.h"

namespace kopt::util {

Status require_regular_file(const std::filesystem::path& path, const std::string& what) {
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (std::filesystem::is_regular_file(st)) return ok_status();
  if (std::filesystem::is_directory(st)) return input_error(what + " " + path.string() + " is a directory: give a file");
  if (std::filesystem::exists(st)) return input_error(what + " " + path.string() + " is not a regular file");
  return input_error(what + " " + path.string() + " not found");
}

Result<std::string> read_text_file(const std::filesystem::path& path, const std::string& what) {
  KOPT_TRY(require_regular_file(path, what));
  KOPT_TRY_ASSIGN(std::string text, read_file(path));
  if (text.find('\0') != std::string::npos)
    return input_error(what + " " + path.string() + " is not a text file (it holds NUL bytes): give the source");
  return text;
}

}  // namespace kopt::util
