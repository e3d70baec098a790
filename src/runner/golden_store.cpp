#include "runner/golden_store.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "util/hash.h"
#include "util/json_io.h"

namespace kopt::runner {

Result<const contract::TensorMap*> GoldenEntry::seed(int seed) {
  auto it = seeds_.find(seed);
  if (it != seeds_.end()) return &it->second;
  KOPT_TRY_ASSIGN(auto t, load_seed(golden_, seed));
  for (const auto& [name, tensor] : t) bytes_ += static_cast<int64_t>(tensor.data.size());
  return &seeds_.emplace(seed, std::move(t)).first->second;
}

std::string golden_identity(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> parts;  // file name, what identifies it
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const std::string name = e.path().filename().string();
    if (name == "manifest.json" || name == "signature.json") {
      auto j = util::read_json(e.path());
      if (!j || !j->is_object()) return "";
      j->erase("meta");
      j->erase("golden_cache");
      parts.emplace_back(name, j->dump());
      continue;
    }
    struct stat st {};
    if (::stat(e.path().c_str(), &st) != 0) return "";
    parts.emplace_back(name, fmt::format("{}:{}:{}:{}.{}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                                         st.st_mtim.tv_nsec));
  }
  if (ec || parts.empty()) return "";
  std::sort(parts.begin(), parts.end());
  util::Hasher h;
  for (const auto& [name, id] : parts) h.add(name).add(id);
  return h.hex();
}

Result<GoldenEntry*> GoldenStore::get(const std::filesystem::path& dir) {
  std::string key = golden_identity(dir);
  if (key.empty()) {  // unreadable: by its path, and load_golden says what is wrong
    key = dir.lexically_normal().string();
    while (key.size() > 1 && key.back() == '/') key.pop_back();  // "d/." normalises to "d/"
  }
  auto it = std::find_if(order_.begin(), order_.end(), [&](const auto& e) { return e.first == key; });
  if (it != order_.end()) {
    order_.splice(order_.begin(), order_, it);
    order_.front().second->rebind(dir);
    return order_.front().second.get();
  }
  KOPT_TRY_ASSIGN(auto g, load_golden(dir));
  ++loads_;
  order_.emplace_front(key, std::make_unique<GoldenEntry>(std::move(g)));
  return order_.front().second.get();
}

int64_t GoldenStore::bytes() const {
  int64_t b = 0;
  for (const auto& [key, e] : order_) b += e->bytes();
  return b;
}

void GoldenStore::trim() {
  while (order_.size() > 1 && bytes() > budget_) order_.pop_back();
}

int64_t default_golden_budget_bytes() {
  if (const char* mb = std::getenv("KOPT_GOLDEN_CACHE_MB")) {
    char* end = nullptr;
    long long v = std::strtoll(mb, &end, 10);
    if (end != mb && *end == '\0' && v >= 0) return static_cast<int64_t>(v) << 20;
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const int64_t phys = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : int64_t{8} << 30;
  return std::min<int64_t>(phys / 4, int64_t{32} << 30);
}

}  // namespace kopt::runner
