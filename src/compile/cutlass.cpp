#include "compile/cutlass.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "compile/includes.h"
#include "toolchain/cutlass.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::compile {

namespace fs = std::filesystem;

bool uses_cutlass(std::string_view text) {
  for (const auto& inc : include_directives(text))
    if (util::starts_with(inc.name, "cutlass/") || util::starts_with(inc.name, "cute/")) return true;
  return false;
}

std::string cutlass_arch(const std::string& arch) {
  if (arch.size() < 5 || arch.rfind("sm_", 0) != 0) return arch;
  std::string digits = arch.substr(3);
  if (digits.size() > 4 || !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return arch;
  return std::stoi(digits) >= 90 ? arch + "a" : arch;
}

namespace {

bool has_flag(const std::vector<std::string>& flags, auto&& pred) { return std::any_of(flags.begin(), flags.end(), pred); }

}  // namespace

void apply_cutlass(CompileRequest& req, const std::string& include_dir) {
  req.cutlass = true;
  req.arch = cutlass_arch(req.arch);
  if (!include_dir.empty() &&
      std::find(req.include_dirs.begin(), req.include_dirs.end(), include_dir) == req.include_dirs.end())
    req.include_dirs.push_back(include_dir);
  const auto& own = req.extra_flags;
  std::vector<std::string> add;
  if (!has_flag(own, [](const std::string& f) { return util::starts_with(f, "-std") || util::starts_with(f, "--std"); }))
    add.push_back("-std=c++17");
  if (!has_flag(own, [](const std::string& f) { return f == "--expt-relaxed-constexpr" || f == "-expt-relaxed-constexpr"; }))
    add.push_back("--expt-relaxed-constexpr");
  bool ndebug_said = req.defines.count("NDEBUG") > 0 || has_flag(own, [](const std::string& f) {
                       return f == "-DNDEBUG" || util::starts_with(f, "-DNDEBUG=") || f == "-UNDEBUG";
                     });
  if (!ndebug_said) add.push_back("-DNDEBUG");
  req.extra_flags.insert(req.extra_flags.begin(), add.begin(), add.end());
  req.est_mem_bytes = std::max<size_t>(req.est_mem_bytes, kCutlassJobMemBytes);
}

bool is_cutlass_source(const fs::path& source) {
  auto text = util::read_file(source);
  if (!text) return false;
  if (uses_cutlass(*text)) return true;
  auto headers = collect_local_headers(source, {});  // a header of the kernel's own may be the one including it
  if (!headers) return false;
  return std::any_of(headers->begin(), headers->end(), [](const LocalHeader& h) { return uses_cutlass(h.text); });
}

bool configure_cutlass(CompileRequest& req, bool forced) {
  if (!forced && !is_cutlass_source(req.source)) return false;
  std::string dir;
  if (toolchain::cutlass_include_among(req.include_dirs).empty()) dir = toolchain::find_cutlass_include().dir;
  apply_cutlass(req, dir);
  return true;
}

std::string cutlass_headers_problem(const CompileRequest& req) {
  if (!req.cutlass) return "";
  std::vector<std::string> dirs = req.include_dirs;
  for (const auto& f : req.extra_flags)
    if (util::starts_with(f, "-I") && f.size() > 2) dirs.push_back(f.substr(2));
  dirs.push_back(req.source.parent_path().empty() ? "." : req.source.parent_path().string());
  for (const char* var : {"CPATH", "CPLUS_INCLUDE_PATH"})
    if (const char* v = std::getenv(var); v && *v)
      for (const auto& d : util::split(v, ':')) dirs.push_back(d);
  for (const char* d : {"/usr/include", "/usr/local/include", "/usr/local/cuda/include"}) dirs.push_back(d);
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) dirs.push_back(std::string(home) + "/include");
  if (!toolchain::cutlass_include_among(dirs).empty()) return "";
  auto found = toolchain::find_cutlass_include();
  std::string why = found.found() ? "" : found.problem + "; ";
  return "CUTLASS headers not found (no include folder holds cutlass/cutlass.h; " + why +
         "looked in the include dirs, the kernel's folder, CPATH and the system folders). Fix: pass "
         "--cutlass-include DIR (the folder holding cutlass/ and cute/), set CUTLASS_PATH to a CUTLASS tree (the "
         "folder holding include/cutlass/cutlass.h), or install the headers with `pip install --no-deps "
         "nvidia-cutlass==4.2.0.0` (scripts/setup.sh does)";
}

}  // namespace kopt::compile
