#pragma once
// The measuring worker's golden data: every directory it has served (one per case of the workload matrix),
// with each seed's tensors read from disk once, up to a byte budget. A candidate is raced at the full case and
// checked at the others: with one directory cached, every candidate re-read them all (issue 16, cheap candidates).
#include <cstdint>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <string>

#include "contract/safetensors.h"
#include "core/result.h"
#include "runner/golden.h"

namespace kopt::runner {

// One directory's golden data and the seeds read so far.
class GoldenEntry {
 public:
  explicit GoldenEntry(Golden g) : golden_(std::move(g)) {}
  const Golden& golden() const { return golden_; }
  // The same golden data found under another folder (hard links to the same cache entry, golden_identity()):
  // seeds not read yet are read from there.
  void rebind(const std::filesystem::path& dir) { golden_.dir = dir; }
  // The seed's tensors, read on first use; a read error is returned (and not cached).
  Result<const contract::TensorMap*> seed(int seed);
  int64_t bytes() const { return bytes_; }  // tensor bytes held

 private:
  Golden golden_;
  std::map<int, contract::TensorMap> seeds_;
  int64_t bytes_ = 0;
};

class GoldenStore {
 public:
  // `budget_bytes`: tensor bytes kept across directories; the directory in use is never evicted, whatever its size.
  explicit GoldenStore(int64_t budget_bytes) : budget_(budget_bytes) {}
  // The entry of `dir` (loaded on first use, then the most recently used). The pointer stays valid until the next
  // trim(). Entries are keyed by golden_identity(): each `kopt bench` run's golden folder holds hard links to the
  // same cache entry, so a warm worker (runner/warm.h) reads that data once, whatever the folder.
  Result<GoldenEntry*> get(const std::filesystem::path& dir);
  int64_t bytes() const;
  size_t directories() const { return order_.size(); }
  int loads() const { return loads_; }  // directories read from disk so far (a hit reads nothing)
  // Called after a request: drops least recently used directories until the held bytes fit (never the newest).
  void trim();

 private:
  int64_t budget_;
  std::list<std::pair<std::string, std::unique_ptr<GoldenEntry>>> order_;  // most recently used first
  int loads_ = 0;
};

// What golden data `dir` holds: manifest.json and signature.json by content (without their meta block and the
// manifest's golden_cache provenance), every other file by device, inode, size and modification time (the harness
// and the golden cache replace files by renaming, never write into one). Two folders of links to one cache entry
// share it; data written again under the same folder does not.
std::string golden_identity(const std::filesystem::path& dir);

// The default budget: a quarter of the machine's physical memory, at most 32 GiB (KOPT_GOLDEN_CACHE_MB overrides).
int64_t default_golden_budget_bytes();

}  // namespace kopt::runner
