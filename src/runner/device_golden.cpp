#include "runner/device_golden.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include "runner/fatal.h"

namespace kopt::runner {

DeviceGolden::DeviceGolden(const device::DriverApi& api, int64_t budget_bytes) : api_(api), budget_(budget_bytes) {
  if (budget_ <= 0) {
    disabled_reason_ = "KOPT_GOLDEN_GPU_MB=0";
    return;
  }
  try {
    compare_ = std::make_unique<DeviceCompare>(api_);
  } catch (const Fatal& f) {
    disabled_reason_ = f.message;  // the checks stay on the host
  }
}

DeviceGolden::~DeviceGolden() {
  for (auto& [key, s] : order_) free_seed(*s);
}

void DeviceGolden::free_seed(ResidentSeed& s) {
  for (auto& [name, t] : s.tensors)
    if (t.ptr) api_.cuMemFree(t.ptr);
  s.tensors.clear();
  bytes_ -= s.bytes;
  s.bytes = 0;
}

std::shared_ptr<const ResidentSeed> DeviceGolden::get(const std::string& key, const contract::TensorMap& tensors) {
  if (!enabled()) return nullptr;
  auto it = std::find_if(order_.begin(), order_.end(), [&](const auto& e) { return e.first == key; });
  if (it != order_.end()) {
    order_.splice(order_.begin(), order_, it);
    return order_.front().second;
  }
  int64_t need = 0;
  for (const auto& [name, t] : tensors) need += static_cast<int64_t>(t.data.size());
  if (need > budget_) return nullptr;
  // Evict the least recently used seeds that no check is using.
  for (auto e = order_.end(); bytes_ + need > budget_ && e != order_.begin();) {
    --e;
    if (e->second.use_count() == 1) {
      free_seed(*e->second);
      e = order_.erase(e);
    }
  }
  if (bytes_ + need > budget_) return nullptr;
  auto seed = std::make_shared<ResidentSeed>();
  for (const auto& [name, t] : tensors) {
    ResidentTensor r;
    r.bytes = static_cast<int64_t>(t.data.size());
    r.numel = t.numel();
    r.dtype = t.dtype;
    if (api_.cuMemAlloc(&r.ptr, static_cast<size_t>(std::max<int64_t>(r.bytes, 1))) != CUDA_SUCCESS) {
      free_seed(*seed);  // no room on the GPU: this seed is checked on the host
      return nullptr;
    }
    seed->tensors[name] = r;
    seed->bytes += r.bytes;
    bytes_ += r.bytes;
    try {
      check_cuda(api_, api_.cuMemcpyHtoD(r.ptr, t.data.data(), t.data.size()), "golden data to the GPU: " + name);
      seed->tensors[name].sum = compare_->checksum(r.dtype, r.ptr, r.numel);
    } catch (const Fatal&) {
      free_seed(*seed);
      throw;
    }
  }
  ++uploads_;
  order_.emplace_front(key, seed);
  return seed;
}

void DeviceGolden::corrupted() {
  ++corruptions_;
  for (auto& [key, s] : order_) free_seed(*s);
  order_.clear();
}

int64_t default_device_golden_budget_bytes(const device::DriverApi& api) {
  if (const char* mb = std::getenv("KOPT_GOLDEN_GPU_MB")) {
    char* end = nullptr;
    long long v = std::strtoll(mb, &end, 10);
    if (end != mb && *end == '\0' && v >= 0) return static_cast<int64_t>(v) << 20;
  }
  size_t free_b = 0, total_b = 0;
  if (api.cuMemGetInfo(&free_b, &total_b) != CUDA_SUCCESS) return 0;
  return std::min<int64_t>(static_cast<int64_t>(free_b / 4), int64_t{16} << 30);
}

std::string resident_key(const std::filesystem::path& dir, int seed) {
  // By the file, not its folder: each bench run's golden folder links the same cache entry (golden_identity()).
  const auto file = dir / ("seed_" + std::to_string(seed) + ".safetensors");
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return dir.lexically_normal().string() + "|" + std::to_string(seed) + "|missing";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + "|" + std::to_string(seed) + "|" +
         std::to_string(st.st_size) + "|" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace kopt::runner
