#include "toolchain/cutlass.h"

#include <cstdlib>
#include <filesystem>
#include <map>

#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::toolchain {

namespace fs = std::filesystem;

namespace {

bool holds_cutlass(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "cutlass" / "cutlass.h", ec);
}

std::string absolute_normal(const fs::path& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return (ec ? p : a).lexically_normal().string();
}

std::string version_of(const std::string& include_dir) {
  auto text = util::read_file(fs::path(include_dir) / "cutlass" / "version.h");
  if (!text) return "";
  return parse_cutlass_version(*text).value_or("");
}

}  // namespace

std::string cutlass_include_dir_of(const std::string& path) {
  if (path.empty()) return "";
  fs::path p(path);
  if (holds_cutlass(p / "include")) return absolute_normal(p / "include");
  if (holds_cutlass(p)) return absolute_normal(p);
  return "";
}

std::vector<std::string> cutlass_wheel_include_candidates(const std::vector<std::string>& site_dirs) {
  std::vector<std::string> out;
  for (const auto& d : site_dirs) out.push_back((fs::path(d) / "cutlass_library" / "source" / "include").string());
  return out;
}

std::optional<std::string> parse_cutlass_version(std::string_view text) {
  std::map<std::string, std::string> v;
  for (const auto& raw : util::split_lines(text)) {
    std::string line = util::trim(raw);
    for (char& c : line)
      if (c == '\t') c = ' ';
    auto words = util::split(line, ' ');  // empty pieces skipped
    if (words.size() < 3 || words[0] != "#define") continue;
    for (const char* key : {"CUTLASS_MAJOR", "CUTLASS_MINOR", "CUTLASS_PATCH"})
      if (words[1] == key && words[2].find_first_not_of("0123456789") == std::string::npos) v[key] = words[2];
  }
  if (v.size() != 3) return std::nullopt;
  return v["CUTLASS_MAJOR"] + "." + v["CUTLASS_MINOR"] + "." + v["CUTLASS_PATCH"];
}

CutlassInclude find_cutlass_include() {
  CutlassInclude r;
  if (const char* p = std::getenv("CUTLASS_PATH"); p && *p) {
    r.origin = "CUTLASS_PATH";
    r.dir = cutlass_include_dir_of(p);
    if (r.dir.empty())
      r.problem = std::string("CUTLASS_PATH=") + p + ": neither " + p + "/include/cutlass/cutlass.h nor " + p +
                  "/cutlass/cutlass.h exists";
  } else {
    for (const auto& c : cutlass_wheel_include_candidates(python_site_dirs()))
      if (holds_cutlass(c)) {
        r.origin = "nvidia-cutlass wheel";
        r.dir = absolute_normal(c);
        break;
      }
    if (r.dir.empty())
      r.problem = find_python().empty()
                      ? "CUTLASS_PATH is not set and there is no python3 to find the nvidia-cutlass wheel with"
                      : "CUTLASS_PATH is not set and " + find_python() +
                            " has no nvidia-cutlass wheel (cutlass_library/source/include)";
  }
  if (!r.dir.empty()) r.version = version_of(r.dir);
  return r;
}

std::string cutlass_include_among(const std::vector<std::string>& include_dirs) {
  for (const auto& d : include_dirs)
    if (holds_cutlass(d)) return d;
  return "";
}

}  // namespace kopt::toolchain
