#pragma once
// Golden data resident on the GPU (issue 16, cheap candidates; docs/RUNNER.md "Checks on the GPU"). A measuring
// worker uploads each seed's inputs and expected outputs once, keeps them for its life (up to a byte budget of GPU
// memory) and then, for every candidate, fills its input buffers by a device-to-device copy and compares its
// outputs on the GPU (runner/device_compare.h): at sgemm 4096^3 a check uploaded 128 MB, downloaded 192 MB and
// compared them on the host, for each of three seeds.
//
// A candidate's kernel runs in the same context and could write out of bounds into this data. So every buffer's
// checksum is taken at upload, every check recomputes the checksum of the golden buffers it reads, and a difference
// drops the whole cache (corrupted()): the check is then done again from the host's copy, which no kernel can reach.
#include <cuda.h>

#include <cstdint>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <string>

#include "contract/safetensors.h"
#include "device/cuda_driver.h"
#include "runner/device_compare.h"

namespace kopt::runner {

struct ResidentTensor {
  CUdeviceptr ptr = 0;
  int64_t bytes = 0;
  int64_t numel = 0;
  contract::DType dtype = contract::DType::kF32;
  uint64_t sum = 0;  // the checksum at upload
};

// One seed's tensors on the GPU, by their golden names ("in.A", "out.C").
struct ResidentSeed {
  std::map<std::string, ResidentTensor> tensors;
  int64_t bytes = 0;
};

class DeviceGolden {
 public:
  // `budget_bytes` of GPU memory at most; 0 disables the cache (every check on the host).
  DeviceGolden(const device::DriverApi& api, int64_t budget_bytes);
  ~DeviceGolden();
  DeviceGolden(const DeviceGolden&) = delete;
  DeviceGolden& operator=(const DeviceGolden&) = delete;

  // The seed's tensors on the GPU, uploaded on first use. Null when the cache is off, the seed does not fit the
  // budget (after evicting the seeds no check holds) or the GPU has no room: the caller checks on the host.
  // `key` names the golden data (its directory and the seed file's size and time); `tensors` are the host's.
  std::shared_ptr<const ResidentSeed> get(const std::string& key, const contract::TensorMap& tensors);
  // A check found a golden buffer changed since its upload: frees everything (the next get() uploads again) and
  // counts it.
  void corrupted();
  DeviceCompare* compare() { return compare_.get(); }
  bool enabled() const { return budget_ > 0 && compare_ != nullptr; }
  int64_t bytes() const { return bytes_; }
  int uploads() const { return uploads_; }
  int corruptions() const { return corruptions_; }
  std::string disabled_reason() const { return disabled_reason_; }

 private:
  void free_seed(ResidentSeed& s);
  const device::DriverApi& api_;
  int64_t budget_;
  std::unique_ptr<DeviceCompare> compare_;
  std::list<std::pair<std::string, std::shared_ptr<ResidentSeed>>> order_;  // most recently used first
  int64_t bytes_ = 0;
  int uploads_ = 0, corruptions_ = 0;
  std::string disabled_reason_;
};

// The default budget: KOPT_GOLDEN_GPU_MB when set (0 turns checks on the GPU off), else a quarter of the GPU's free
// memory when first asked, at most 16 GiB.
int64_t default_device_golden_budget_bytes(const device::DriverApi& api);

// The key of one seed of one golden directory: the seed file's device, inode, size and modification time, so golden
// data written again under the same path is uploaded again, and the hard links of another folder to the same file
// (the golden cache's, runner/golden_store.h golden_identity()) are not.
std::string resident_key(const std::filesystem::path& dir, int seed);

}  // namespace kopt::runner
