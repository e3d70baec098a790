#include "util/json_io.h"

#include <chrono>
#include <ctime>

#include "util/fs.h"

namespace kopt::util {

namespace {
MetaInfo& meta_storage() {
  static MetaInfo info;
  return info;
}
}  // namespace

void set_meta_info(MetaInfo info) { meta_storage() = std::move(info); }
const MetaInfo& meta_info() { return meta_storage(); }

std::string utc_now_iso() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Json make_meta(const std::string& kind) {
  const auto& m = meta_info();
  return Json{{"kind", kind},   {"kopt_version", KOPT_VERSION}, {"gpu", m.gpu}, {"driver", m.driver},
              {"nvcc", m.nvcc}, {"ncu", m.ncu},                 {"time", utc_now_iso()}};
}

Status write_json_atomic(const std::filesystem::path& path, const std::string& kind, const Json& body) {
  Json out = Json::object();
  out["meta"] = make_meta(kind);
  if (body.is_object()) {
    for (auto it = body.begin(); it != body.end(); ++it) out[it.key()] = it.value();
  } else {
    out["data"] = body;
  }
  return write_file_atomic(path, out.dump(2) + "\n");
}

Result<Json> read_json(const std::filesystem::path& path) {
  KOPT_TRY_ASSIGN(std::string text, read_file(path));
  try {
    return Json::parse(text);
  } catch (const std::exception& e) {
    return input_error(path.string() + " is not valid JSON: " + e.what());
  }
}

}  // namespace kopt::util
