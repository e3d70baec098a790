#pragma once
// Golden data kept across runs (docs/CONTRACT.md, "The golden-data cache"). A second `kopt optimize` or
// `kopt bench` of the same ref.py at the same dims and seeds finds the files the first one made instead of running
// ref.py again: each entry is a folder <root>/<key>/ holding the harness's output files and entry.json. Entries are
// made in <root>/tmp/<unique>/ and renamed into place, so a reader never sees half an entry; a run's golden folder
// gets hard links to an entry's files (a copy where links cannot be made). The harness replaces a file by renaming
// a new one over it and never writes into one, so a run cannot change an entry through its links.
//
// The key (golden_maker.cpp) covers the harness's sources, the Python it runs on, ref.py's path and content, every
// other *.py beside ref.py (what it may import), the kernel (Triton) or the signature (CUDA) and the harness's
// arguments. KOPT_GOLDEN_CACHE=off turns the cache off; KOPT_GOLDEN_CACHE_GB (default 20) bounds its size, the
// least recently used entries going first.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "core/result.h"
#include "util/json_io.h"

namespace kopt::contract {

struct GoldenCache {
  std::filesystem::path root;
  std::uint64_t max_bytes = 20ULL << 30;
};

// From the environment: nullopt when KOPT_GOLDEN_CACHE is off/0/no; a root from KOPT_GOLDEN_CACHE (a path),
// else $KOPT_CACHE_DIR/golden, $XDG_CACHE_HOME/kopt/golden, ~/.cache/kopt/golden. An unreadable
// KOPT_GOLDEN_CACHE_GB is an input error naming it.
Result<std::optional<GoldenCache>> golden_cache_from_env();

struct CacheHit {
  std::filesystem::path entry;
  util::Json record;  // entry.json: key, made (UTC), bytes, files
};

// The entry for key, if complete (entry.json present and every file it lists there with its size).
std::optional<CacheHit> find_golden(const GoldenCache& cache, const std::string& key);

// Puts the entry's files into out_dir (hard links, else copies), replacing files of the same names, and marks
// the entry used. Errors name the file that could not be placed.
Status place_golden(const CacheHit& hit, const std::filesystem::path& out_dir);

// Stores out_dir's regular files (not its subfolders) as the entry for key, then evicts least recently used
// entries until the cache fits max_bytes (never the new one; an entry larger than max_bytes is not stored).
// Returns whether it was stored. A failure to store is reported, never fatal to the caller's run.
Result<bool> store_golden(const GoldenCache& cache, const std::string& key, const std::filesystem::path& out_dir,
                          const util::Json& about);

}  // namespace kopt::contract
