#pragma once
// Where the sealed seed of golden data lives (runner/sealed.h, docs/GATES.md "The sealed seed"): one more seed, drawn
// from a secret random number when the golden data is made, written beneath sealed_root() only, which no measuring
// process can open. The golden manifest names it by a token ("sealed": {"token": ...}).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "util/json_io.h"

namespace kopt::contract {

// Where sealed seeds live: kopt's cache directory's "sealed" folder (KOPT_CACHE_DIR, XDG_CACHE_HOME or
// ~/.cache/kopt), one folder per golden data made, named by a random token.
std::filesystem::path sealed_root();
std::filesystem::path sealed_seed_file(const std::string& token);
// A fresh token: 32 hex digits from the system's random source.
std::string new_sealed_token();
// The manifest's sealed token ("sealed": {"token": ...}), validated; nullopt when the golden data has none.
std::optional<std::string> sealed_token(const util::Json& manifest);
// Sealed folders older than `max_age_days`, then the oldest beyond `max_bytes` in all, are removed (each golden
// data made leaves one; a cached golden entry whose sealed folder is gone is made again).
void prune_sealed(const std::filesystem::path& root, double max_age_days = 14, uint64_t max_bytes = 8ull << 30);
// The manifest names a sealed seed and its file is there (a cached golden entry without it is made again).
bool sealed_seed_present(const util::Json& manifest);

}  // namespace kopt::contract
