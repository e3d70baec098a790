#include "compile/cache.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/fs.h"

namespace kopt::compile {

namespace fs = std::filesystem;

fs::path default_cache_dir() {
  if (const char* v = std::getenv("KOPT_CACHE_DIR"); v && *v) return v;
  if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v) return fs::path(v) / "kopt" / "build";
  if (const char* v = std::getenv("HOME"); v && *v) return fs::path(v) / ".cache" / "kopt" / "build";
  return fs::temp_directory_path() / "kopt-cache" / "build";
}

fs::path BuildCache::entry_dir(const std::string& key) const { return root_ / key.substr(0, 2) / key; }

std::optional<CacheEntry> BuildCache::find(const std::string& key) const {
  CacheEntry e;
  e.dir = entry_dir(key);
  e.library = e.dir / kLibraryName;
  e.log = e.dir / kLogName;
  std::error_code ec;
  if (!fs::is_regular_file(e.library, ec) || !fs::is_regular_file(e.dir / kEntryName, ec)) return std::nullopt;
  auto j = util::read_json(e.dir / kEntryName);
  if (!j) return std::nullopt;  // a damaged entry is a miss; commit() replaces it
  e.entry = std::move(j).value();
  return e;
}

Result<fs::path> BuildCache::make_staging_dir() const { return util::make_unique_dir(root_ / "tmp"); }

Result<CacheEntry> BuildCache::commit(const fs::path& staging, const std::string& key) const {
  fs::path dst = entry_dir(key);
  std::error_code ec;
  fs::create_directories(dst.parent_path(), ec);
  if (ec) return internal_error("cannot create " + dst.parent_path().string() + ": " + ec.message());
  if (::rename(staging.c_str(), dst.c_str()) != 0) {
    int e = errno;
    if (e != EEXIST && e != ENOTEMPTY) {
      fs::remove_all(staging, ec);
      return internal_error("cannot move " + staging.string() + " to " + dst.string() + ": " + std::strerror(e));
    }
    // Another builder won the race, or a damaged entry sits there: replace a damaged one, keep a good one.
    bool moved = false;
    if (!find(key)) {
      fs::path old = staging.string() + ".damaged";
      if (::rename(dst.c_str(), old.c_str()) == 0) {
        fs::remove_all(old, ec);
        moved = ::rename(staging.c_str(), dst.c_str()) == 0;
      }
    }
    if (!moved) fs::remove_all(staging, ec);
  }
  auto found = find(key);
  if (!found) return internal_error("the build cache entry " + dst.string() + " is incomplete after commit");
  return *found;
}

}  // namespace kopt::compile
