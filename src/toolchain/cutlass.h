#pragma once
// Finding the CUTLASS headers (include/cutlass, include/cute): $CUTLASS_PATH, else the nvidia-cutlass wheel
// of the python3 in use, whose headers live in <site-packages>/cutlass_library/source/include.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::toolchain {

struct CutlassInclude {
  std::string dir;      // absolute; holds cutlass/cutlass.h (and cute/); empty when not found
  std::string origin;   // "CUTLASS_PATH", "nvidia-cutlass wheel"
  std::string version;  // "4.2.0", from cutlass/version.h; empty when unreadable
  std::string problem;  // when not found: what was looked at
  bool found() const { return !dir.empty(); }
};

// The include folder of a CUTLASS tree given as `path`: `path/include` when it holds cutlass/cutlass.h (a
// CUTLASS checkout or CUTLASS_PATH), else `path` itself when it does (an include folder). Absolute and
// lexically normal; empty when neither holds cutlass/cutlass.h.
std::string cutlass_include_dir_of(const std::string& path);

// Where find_cutlass_include looks inside site-packages folders, in order (pure).
std::vector<std::string> cutlass_wheel_include_candidates(const std::vector<std::string>& site_dirs);

// "#define CUTLASS_MAJOR 4" ... from cutlass/version.h -> "4.2.0" (pure).
std::optional<std::string> parse_cutlass_version(std::string_view version_h);

// $CUTLASS_PATH when set (a wrong one is not found, with the reason: kopt does not silently use another
// copy), else the nvidia-cutlass wheel (python_site_dirs()). Reads the environment and the disk each call.
CutlassInclude find_cutlass_include();

// The include folder among `include_dirs` that holds cutlass/cutlass.h; empty when none does.
std::string cutlass_include_among(const std::vector<std::string>& include_dirs);

}  // namespace kopt::toolchain
