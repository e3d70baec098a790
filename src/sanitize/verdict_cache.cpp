#include "sanitize/verdict_cache.h"

#include "util/fs.h"
#include "util/hash.h"
#include "util/keyed_store.h"
#include "util/strings.h"

namespace kopt::sanitize {

namespace fs = std::filesystem;

std::string verdict_key(const VerdictSubject& s, const Request& request) {
  const std::string sanitizer = util::file_stamp(s.sanitizer), checker = util::file_stamp(s.checker);
  if (s.code.empty() || s.golden.empty() || sanitizer.empty() || checker.empty() || s.gpu.empty() || s.driver.empty()) return "";
  util::Hasher h;
  h.add("kopt-sanitize-verdict-1").add(s.code).add(s.golden);
  h.add(fs::absolute(s.sanitizer).string()).add(sanitizer).add(fs::absolute(s.checker).string()).add(checker);
  h.add(s.gpu).add(s.driver);
  for (Tool t : request.tools) h.add(tool_name(t));
  for (const auto& v : util::kopt_environment()) h.add(v);  // the check child reads kopt's settings too
  h.add(request.fill_argv.empty() ? "no fill" : std::string("fill ") + kFillPattern);
  return h.hex();
}

bool keepable(const Verdict& v) {
  return v.complete() && !v.rejected && (v.fill.outcome == FillOutcome::kClean || v.fill.outcome == FillOutcome::kSkipped) &&
         v.from_cache.empty();
}

std::optional<Verdict> find_verdict(const fs::path& dir, const std::string& key) {
  auto entry = util::find_keyed(dir, key);
  if (!entry) return std::nullopt;
  auto v = verdict_from_json(entry->value);
  if (!v || !keepable(*v)) return std::nullopt;  // only what keep_verdict would keep is believed
  v->from_cache = entry->where;
  return std::move(v).value();
}

Result<bool> keep_verdict(const fs::path& dir, const std::string& key, const Verdict& v, const std::string& run_dir) {
  if (key.empty() || !keepable(v)) return false;
  KOPT_TRY(util::keep_keyed(dir, key, "sanitizer_verdict", to_json(v), run_dir));
  return true;
}

}  // namespace kopt::sanitize
