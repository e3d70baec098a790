#include "contract/golden_cache.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "util/fs.h"
#include "util/strings.h"

namespace kopt::contract {

namespace fs = std::filesystem;

namespace {

constexpr const char* kEntry = "entry.json";
constexpr const char* kUsed = "used";  // its mtime: when the entry was last made or placed

void mark_used(const fs::path& entry) {
  std::error_code ec;
  const fs::path u = entry / kUsed;
  if (!fs::exists(u, ec)) {
    if (std::FILE* f = std::fopen(u.c_str(), "w")) std::fclose(f);
  }
  fs::last_write_time(u, fs::file_time_type::clock::now(), ec);
}

// A hard link, else a copy (another filesystem, or one without links).
Status link_or_copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::remove(to, ec);
  fs::create_hard_link(from, to, ec);
  if (!ec) return ok_status();
  ec.clear();
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return internal_error("cannot place " + from.string() + " as " + to.string() + ": " + ec.message());
  return ok_status();
}

struct Listed {
  fs::path dir;
  std::uint64_t bytes = 0;
  fs::file_time_type used;
};

std::vector<Listed> list_entries(const fs::path& root) {
  std::vector<Listed> out;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec) || it->path().filename() == "tmp") continue;
    auto j = util::read_json(it->path() / kEntry);
    if (!j) continue;  // being written by hand, or damaged: left alone
    Listed l{it->path(), j->value("bytes", std::uint64_t{0}), {}};
    std::error_code e2;
    l.used = fs::last_write_time(it->path() / kUsed, e2);
    if (e2) l.used = fs::last_write_time(it->path() / kEntry, e2);
    out.push_back(l);
  }
  return out;
}

}  // namespace

Result<std::optional<GoldenCache>> golden_cache_from_env() {
  GoldenCache c;
  const char* v = std::getenv("KOPT_GOLDEN_CACHE");
  const std::string s = v ? util::trim(v) : "";
  if (util::is_off_word(s)) return std::optional<GoldenCache>{};
  if (!s.empty() && s != "on" && s != "1") {
    c.root = s;
  } else {
    c.root = util::kopt_cache_dir("golden");
  }
  if (const char* g = std::getenv("KOPT_GOLDEN_CACHE_GB"); g && *g) {
    char* end = nullptr;
    errno = 0;
    double gb = std::strtod(g, &end);
    if (errno != 0 || end == g || *end != '\0' || !(gb >= 0))
      return input_error(std::string("KOPT_GOLDEN_CACHE_GB=") + g + ": give the golden-data cache's size in GiB, e.g. 20 (0 stores nothing)");
    c.max_bytes = static_cast<std::uint64_t>(gb * static_cast<double>(1ULL << 30));
  }
  return std::optional<GoldenCache>{c};
}

std::optional<CacheHit> find_golden(const GoldenCache& cache, const std::string& key) {
  const fs::path dir = cache.root / key;
  auto j = util::read_json(dir / kEntry);
  if (!j) return std::nullopt;
  std::error_code ec;
  for (const auto& f : j->value("files", util::Json::array())) {
    const fs::path p = dir / f.value("name", std::string());
    if (!fs::is_regular_file(p, ec) || fs::file_size(p, ec) != f.value("bytes", std::uint64_t{0})) return std::nullopt;
  }
  return CacheHit{dir, std::move(j).value()};
}

Status place_golden(const CacheHit& hit, const fs::path& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return internal_error("cannot create " + out_dir.string() + ": " + ec.message());
  for (const auto& f : hit.record.value("files", util::Json::array())) {
    const std::string name = f.value("name", std::string());
    KOPT_TRY(link_or_copy(hit.entry / name, out_dir / name));
  }
  mark_used(hit.entry);
  return ok_status();
}

Result<bool> store_golden(const GoldenCache& cache, const std::string& key, const fs::path& out_dir, const util::Json& about) {
  std::error_code ec;
  util::Json files = util::Json::array();
  std::uint64_t bytes = 0;
  std::vector<fs::path> srcs;
  for (fs::directory_iterator it(out_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const auto n = it->file_size(ec);
    bytes += n;
    files.push_back({{"name", it->path().filename().string()}, {"bytes", n}});
    srcs.push_back(it->path());
  }
  if (ec) return internal_error("cannot list " + out_dir.string() + ": " + ec.message());
  if (bytes > cache.max_bytes) return false;
  if (find_golden(cache, key)) return true;  // another run stored it meanwhile
  KOPT_TRY_ASSIGN(fs::path staging, util::make_unique_dir(cache.root / "tmp"));
  auto abandon = [&](const Error& e) -> Result<bool> {
    fs::remove_all(staging, ec);
    return e;
  };
  for (const auto& s : srcs)
    if (auto st = link_or_copy(s, staging / s.filename()); !st) return abandon(st.error());
  util::Json rec = {{"key", key}, {"made", util::utc_now_iso()}, {"bytes", bytes}, {"files", files}, {"about", about}};
  if (auto st = util::write_file_atomic(staging / kEntry, rec.dump(2) + "\n"); !st) return abandon(st.error());
  mark_used(staging);
  const fs::path dst = cache.root / key;
  if (::rename(staging.c_str(), dst.c_str()) != 0) {
    const int e = errno;
    fs::remove_all(staging, ec);
    if (e != EEXIST && e != ENOTEMPTY) return internal_error("cannot move " + staging.string() + " to " + dst.string() + ": " + std::strerror(e));
    if (!find_golden(cache, key)) {  // a damaged entry sits there: the next run that makes this key replaces it
      fs::remove_all(dst, ec);
      return false;
    }
    return true;
  }
  // Least recently used first, the new entry never.
  auto entries = list_entries(cache.root);
  std::uint64_t total = 0;
  for (const auto& l : entries) total += l.bytes;
  std::sort(entries.begin(), entries.end(), [](const Listed& a, const Listed& b) { return a.used < b.used; });
  for (const auto& l : entries) {
    if (total <= cache.max_bytes) break;
    if (l.dir == dst) continue;
    fs::remove_all(l.dir, ec);
    if (!ec) total -= l.bytes;
  }
  return true;
}

}  // namespace kopt::contract
