#pragma once
// The content-addressed build cache: <root>/<key[0:2]>/<key>/{kernel.so, compile.log, entry.json}.
// An entry is built in <root>/tmp/<unique>/ and renamed into place, so a reader never sees half an entry;
// when two builders race, the first rename wins and the other's staging folder is removed.
#include <filesystem>
#include <optional>
#include <string>

#include "core/result.h"
#include "util/json_io.h"

namespace kopt::compile {

// $KOPT_CACHE_DIR, else $XDG_CACHE_HOME/kopt/build, else ~/.cache/kopt/build.
std::filesystem::path default_cache_dir();

inline constexpr const char* kLibraryName = "kernel.so";
inline constexpr const char* kLogName = "compile.log";
inline constexpr const char* kEntryName = "entry.json";

struct CacheEntry {
  std::filesystem::path dir, library, log;
  util::Json entry;  // entry.json: the key, flags, nvcc version, resources, compile_ms
};

class BuildCache {
 public:
  explicit BuildCache(std::filesystem::path root) : root_(std::move(root)) {}
  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path entry_dir(const std::string& key) const;
  // An entry is complete when its library and entry.json exist (the rename made both appear at once).
  std::optional<CacheEntry> find(const std::string& key) const;
  // A fresh empty folder under <root>/tmp.
  Result<std::filesystem::path> make_staging_dir() const;
  // Moves a staging folder (holding kernel.so, compile.log, entry.json) into place; if another builder
  // committed the same key first, keeps theirs and removes the staging folder.
  Result<CacheEntry> commit(const std::filesystem::path& staging, const std::string& key) const;

 private:
  std::filesystem::path root_;
};

}  // namespace kopt::compile
