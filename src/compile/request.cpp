#include "compile/request.h"

#include <array>
#include <cctype>

namespace kopt::compile {

namespace {
struct StatusInfo {
  CompileStatus status;
  std::string_view name, description;
};
constexpr std::array<StatusInfo, 4> kStatuses = {{
    {CompileStatus::kOk, "ok", "compiled (or found in the build cache)"},
    {CompileStatus::kFailed, "failed", "nvcc failed; its log is kept"},
    {CompileStatus::kTimedOut, "timed_out", "nvcc ran past the compile timeout and was killed"},
    {CompileStatus::kToolMissing, "tool_missing", "nvcc was not found (install the CUDA toolkit or set KOPT_NVCC)"},
}};
static_assert(kStatuses.size() == static_cast<size_t>(CompileStatus::kToolMissing) + 1);
const StatusInfo& info(CompileStatus s) {
  for (const auto& i : kStatuses)
    if (i.status == s) return i;
  return kStatuses[1];
}
}  // namespace

std::string_view to_string(CompileStatus s) { return info(s).name; }
std::string_view describe(CompileStatus s) { return info(s).description; }

util::Json to_json(const CompileResult& r) {
  util::Json res = util::Json::array();
  for (const auto& k : r.resources) res.push_back(to_json(k));
  return {{"name", r.name},
          {"status", std::string(to_string(r.status))},
          {"cache_hit", r.cache_hit},
          {"library", r.library.string()},
          {"log_path", r.log_path.string()},
          {"cache_key", r.cache_key},
          {"compile_ms", r.compile_ms},
          {"resources", res}};
}

std::string method_guard(std::string_view method_id) {
  std::string g = "KOPT_";
  for (char c : method_id)
    g += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : '_';
  return g;
}

}  // namespace kopt::compile
