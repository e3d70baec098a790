#include "contract/sealed_seed.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <random>
#include <vector>

#include "util/fs.h"

namespace kopt::contract {

namespace fs = std::filesystem;

fs::path sealed_root() { return util::kopt_cache_dir("sealed"); }

fs::path sealed_seed_file(const std::string& token) { return sealed_root() / token / "seed.safetensors"; }

std::string new_sealed_token() {
  std::random_device rd;  // the system's random source
  std::string t;
  for (int i = 0; i < 4; ++i) t += fmt::format("{:08x}", static_cast<uint32_t>(rd()));
  return t;
}

std::optional<std::string> sealed_token(const util::Json& manifest) {
  if (!manifest.is_object() || !manifest.contains("sealed") || !manifest["sealed"].is_object()) return std::nullopt;
  const std::string t = manifest["sealed"].value("token", std::string());
  if (t.size() != 32 || !std::all_of(t.begin(), t.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  return t;
}

void prune_sealed(const fs::path& root, double max_age_days, uint64_t max_bytes) {
  std::error_code ec;
  struct Entry {
    fs::path path;
    fs::file_time_type mtime;
    uint64_t bytes = 0;
  };
  std::vector<Entry> entries;
  const auto now = fs::file_time_type::clock::now();
  for (const auto& d : fs::directory_iterator(root, ec)) {
    if (!d.is_directory(ec)) continue;
    Entry e{d.path(), d.last_write_time(ec), 0};
    for (const auto& f : fs::directory_iterator(d.path(), ec))
      if (f.is_regular_file(ec)) e.bytes += f.file_size(ec);
    const double age_days = std::chrono::duration<double>(now - e.mtime).count() / 86400;
    if (age_days > max_age_days) fs::remove_all(e.path, ec);
    else entries.push_back(e);
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.mtime > b.mtime; });
  uint64_t total = 0;
  for (const auto& e : entries) {
    total += e.bytes;
    if (total > max_bytes) fs::remove_all(e.path, ec);
  }
}

bool sealed_seed_present(const util::Json& manifest) {
  auto token = sealed_token(manifest);
  std::error_code ec;
  return token && fs::is_regular_file(sealed_seed_file(*token), ec);
}

}  // namespace kopt::contract
