#include "util/keyed_store.h"

namespace kopt::util {

namespace fs = std::filesystem;

std::optional<KeyedEntry> find_keyed(const fs::path& dir, const std::string& key) {
  if (key.empty()) return std::nullopt;
  const fs::path file = dir / (key + ".json");
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  auto j = read_json(file);
  if (!j || !j->is_object() || j->value("key", std::string()) != key || !j->contains("value")) return std::nullopt;
  return KeyedEntry{(*j)["value"], file.string() + " (made " + j->value("made", std::string("?")) + " by " +
                                       j->value("run_dir", std::string("?")) + ")"};
}

Status keep_keyed(const fs::path& dir, const std::string& key, const std::string& kind, const Json& value,
                  const std::string& run_dir) {
  if (key.empty()) return ok_status();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return input_error("the cache folder " + dir.string() + " cannot be made: " + ec.message());
  return write_json_atomic(dir / (key + ".json"), kind,
                           {{"key", key}, {"made", utc_now_iso()}, {"run_dir", run_dir}, {"value", value}});
}

}  // namespace kopt::util
