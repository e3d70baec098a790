// Checks on the GPU (runner/device_compare.h, runner/device_golden.h) against the host's compare (runner/compare.h),
// on every dtype and the cases that matter: within and beyond tolerance, NaN and infinities on either side, poison
// never overwritten, bitwise equality. Needs a GPU; skips cleanly without one.
#include "runner/device_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "device/gpu_info.h"
#include "runner/device_golden.h"
#include "runner/fatal.h"

namespace kopt::runner {
namespace {

using contract::DType;

class DeviceCompareGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device::query_gpus().ok()) GTEST_SKIP() << "no GPU on this machine";
    auto api = device::load_driver();
    ASSERT_TRUE(api.ok()) << api.error().message;
    api_ = api.value();
    CUdevice dev;
    CUcontext ctx;
    ASSERT_EQ(api_->cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(api_->cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    ASSERT_EQ(api_->cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
    ASSERT_EQ(api_->cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  }
  CUdeviceptr upload(const std::vector<unsigned char>& bytes) {
    CUdeviceptr d = 0;
    EXPECT_EQ(api_->cuMemAlloc(&d, std::max<size_t>(bytes.size(), 1)), CUDA_SUCCESS);
    EXPECT_EQ(api_->cuMemcpyHtoD(d, bytes.data(), bytes.size()), CUDA_SUCCESS);
    owned_.push_back(d);
    return d;
  }
  void TearDown() override {
    for (auto d : owned_) api_->cuMemFree(d);
  }
  const device::DriverApi* api_ = nullptr;
  std::vector<CUdeviceptr> owned_;
};

template <typename T>
void put(std::vector<unsigned char>& v, size_t i, T x) {
  std::memcpy(v.data() + i * sizeof(T), &x, sizeof(T));
}

// Expected and actual buffers of n elements of `t`: mostly close values, then the special cases at fixed places.
std::pair<std::vector<unsigned char>, std::vector<unsigned char>> cases(DType t, size_t n, std::mt19937_64& rng,
                                                                         bool with_errors) {
  const size_t es = contract::dtype_size(t);
  std::vector<unsigned char> e(n * es), a(n * es);
  std::uniform_real_distribution<double> u(-4, 4);
  auto set = [&](std::vector<unsigned char>& v, size_t i, double x) {
    switch (t) {
      case DType::kF32: put(v, i, static_cast<float>(x)); break;
      case DType::kF64: put(v, i, x); break;
      case DType::kF16: {  // a few exact halves: k/8 for small k (sign, exponent and mantissa by hand)
        int k = static_cast<int>(std::lround(x * 8));
        uint16_t h = 0;
        if (k != 0) {
          int m = std::abs(k), ex = 0;
          while (m >= 2048) m >>= 1, ++ex;
          while (m < 1024) m <<= 1, --ex;
          h = static_cast<uint16_t>(((k < 0) << 15) | ((ex + 10 - 3 + 15) << 10) | (m & 0x3ff));
        }
        put(v, i, h);
        break;
      }
      case DType::kBF16: {
        float f = static_cast<float>(x);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        put(v, i, static_cast<uint16_t>(bits >> 16));
        break;
      }
      case DType::kI8: put(v, i, static_cast<int8_t>(std::lround(x * 10))); break;
      case DType::kI16: put(v, i, static_cast<int16_t>(std::lround(x * 1000))); break;
      case DType::kI32: put(v, i, static_cast<int32_t>(std::lround(x * 1e6))); break;
      case DType::kI64: put(v, i, static_cast<int64_t>(std::llround(x * 1e15))); break;
      case DType::kU8: put(v, i, static_cast<uint8_t>(std::lround(std::fabs(x) * 10))); break;
      case DType::kU16: put(v, i, static_cast<uint16_t>(std::lround(std::fabs(x) * 1000))); break;
      case DType::kU32: put(v, i, static_cast<uint32_t>(std::lround(std::fabs(x) * 1e6))); break;
      case DType::kU64: put(v, i, static_cast<uint64_t>(std::llround(std::fabs(x) * 1e15)) | (uint64_t{1} << 63)); break;
      case DType::kBool: put(v, i, static_cast<uint8_t>(x > 0)); break;
    }
  };
  for (size_t i = 0; i < n; ++i) {
    double x = u(rng);
    set(e, i, x);
    // Floats: a small relative error, inside the default tolerance; integers: the same value.
    set(a, i, contract::is_float(t) ? x * (1 + 1e-6 * u(rng)) : x);
  }
  const unsigned char pb = poison_byte(t);
  if (with_errors) {
    set(a, 7, 1000);                                    // beyond any tolerance
    std::memset(a.data() + 11 * es, pb, es);            // never written
    std::memset(a.data() + (n - 1) * es, pb, es);       // never written, the last element
    if (contract::is_float(t)) {
      const double inf = INFINITY, nan = std::nan("");
      set(e, 20, nan), set(a, 20, nan);                 // NaN matches NaN
      set(e, 21, inf), set(a, 21, inf);                 // the same infinity
      set(e, 22, inf), set(a, 22, -inf);                // opposite infinities
      set(e, 23, 1), set(a, 23, nan);                   // NaN where a value was expected
      set(e, 24, -inf), set(a, 24, 2);
      set(e, 25, 0), set(a, 25, 1e-30);                 // e == 0: no relative error
    }
  }
  return {e, a};
}

void expect_same(const CompareResult& gpu, const CompareResult& host, const std::string& what) {
  EXPECT_EQ(gpu.ok, host.ok) << what;
  EXPECT_EQ(gpu.mismatches, host.mismatches) << what;
  EXPECT_EQ(gpu.nan_or_inf_mismatches, host.nan_or_inf_mismatches) << what;
  EXPECT_EQ(gpu.still_poisoned, host.still_poisoned) << what;
  EXPECT_EQ(gpu.bitwise_equal, host.bitwise_equal) << what;
  EXPECT_EQ(gpu.max_abs_err, host.max_abs_err) << what;  // the same double arithmetic: equal, not close
  EXPECT_EQ(gpu.max_rel_err, host.max_rel_err) << what;
  // Sums of a million squares in another order (by warps, then blocks, against the host's chunks in sequence):
  // relative differences of n * eps = 1e-10 at worst. Reported, never decided on.
  EXPECT_NEAR(gpu.rel_l2_err, host.rel_l2_err, 1e-9 * host.rel_l2_err + 1e-300) << what << " (summed in another order)";
}

TEST_F(DeviceCompareGpu, AgreesWithTheHostOnEveryDtypeAndEverySpecialCase) {
  DeviceCompare dc(*api_);
  std::mt19937_64 rng(5);
  const DType all[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,  DType::kI16, DType::kI32,
                       DType::kI64, DType::kU8,  DType::kU16, DType::kU32,  DType::kU64, DType::kBool};
  for (DType t : all) {
    for (bool errors : {false, true}) {
      // Sizes that are not multiples of a block or a warp, and one larger than the grid's stride.
      for (size_t n : {size_t{1} << 20 | 37, size_t{100}}) {
        if (errors && n < 30) continue;
        auto [e, a] = cases(t, n, rng, errors);
        const Tolerance tol = default_tolerance(t);
        const std::string what = std::string(contract::dtype_name(t)) + (errors ? " with errors" : "") + " n=" + std::to_string(n);
        CompareResult host = compare(t, {static_cast<int64_t>(n)}, e.data(), a.data(), static_cast<int64_t>(n), tol);
        DeviceComparison gpu = dc.compare(t, upload(e), upload(a), static_cast<int64_t>(n), tol);
        expect_same(gpu.result, host, what);
        if (errors && t != DType::kBool) {
          EXPECT_FALSE(host.ok) << what << ": the cases include a mismatch";
        }
        // Identical buffers: bitwise, and nothing counted as poisoned even where the value is the poison pattern.
        CompareResult same_host = compare(t, {static_cast<int64_t>(n)}, a.data(), a.data(), static_cast<int64_t>(n), tol);
        DeviceComparison same_gpu = dc.compare(t, upload(a), upload(a), static_cast<int64_t>(n), tol);
        expect_same(same_gpu.result, same_host, what + " (identical)");
        EXPECT_TRUE(same_gpu.result.bitwise_equal) << what;
      }
    }
  }
}

TEST_F(DeviceCompareGpu, EqualityCountsChangedElementsAndTheChecksumSeesOneFlippedBit) {
  DeviceCompare dc(*api_);
  std::vector<unsigned char> ref(4 * ((1 << 20) + 3));
  std::mt19937_64 rng(9);
  for (auto& b : ref) b = static_cast<unsigned char>(rng());
  CUdeviceptr r = upload(ref), same = upload(ref);
  DeviceEquality eq = dc.equal(DType::kF32, r, same, (1 << 20) + 3);
  EXPECT_EQ(eq.differing, 0);
  EXPECT_EQ(eq.reference_sum, dc.checksum(DType::kF32, r, (1 << 20) + 3)) << "the same sum every time";
  auto changed = ref;
  changed[4 * 1000 + 2] ^= 0x10;
  changed[ref.size() - 1] ^= 0x01;
  DeviceEquality ne = dc.equal(DType::kF32, r, upload(changed), (1 << 20) + 3);
  EXPECT_EQ(ne.differing, 2);
  EXPECT_EQ(ne.reference_sum, eq.reference_sum) << "the reference did not change";
  EXPECT_NE(dc.checksum(DType::kF32, upload(changed), (1 << 20) + 3), eq.reference_sum) << "one flipped bit changes the sum";
  // Two elements swapped: the same bytes in another order still change the sum (it mixes in the index).
  auto swapped = ref;
  std::swap_ranges(swapped.begin(), swapped.begin() + 4, swapped.begin() + 4);
  if (swapped != ref) {
    EXPECT_NE(dc.checksum(DType::kF32, upload(swapped), (1 << 20) + 3), eq.reference_sum);
  }
}

TEST_F(DeviceCompareGpu, AResidentSeedIsUploadedOnceEvictedByBudgetAndDroppedWhenOverwritten) {
  contract::TensorMap seed;
  contract::Tensor t;
  t.dtype = DType::kF32;
  t.shape = {1 << 18};
  t.data.resize(4u << 18);
  std::mt19937_64 rng(3);
  for (auto& b : t.data) b = static_cast<unsigned char>(rng());
  seed["in.a"] = t;
  seed["out.c"] = t;
  const int64_t seed_bytes = 2 * (4 << 18);
  DeviceGolden g(*api_, 2 * seed_bytes + 1);  // room for two seeds
  ASSERT_TRUE(g.enabled()) << g.disabled_reason();
  auto s1 = g.get("dir|1", seed);
  ASSERT_TRUE(s1);
  EXPECT_EQ(g.get("dir|1", seed), s1) << "a second use uploads nothing";
  EXPECT_EQ(g.uploads(), 1);
  EXPECT_EQ(g.bytes(), seed_bytes);
  auto s2 = g.get("dir|2", seed);
  ASSERT_TRUE(s2);
  // A third seed does not fit: the least recently used one that nobody holds goes, never one in use.
  auto s3 = g.get("dir|3", seed);
  EXPECT_FALSE(s3) << "both resident seeds are held";
  s1.reset();
  s3 = g.get("dir|3", seed);
  ASSERT_TRUE(s3) << "dir|1 is free to go";
  EXPECT_EQ(g.uploads(), 3);
  EXPECT_EQ(g.bytes(), 2 * seed_bytes);
  EXPECT_FALSE(DeviceGolden(*api_, seed_bytes - 1).get("x", seed)) << "a seed larger than the budget stays on the host";
  EXPECT_FALSE(DeviceGolden(*api_, 0).enabled());
  // A kernel that writes into resident data: the recomputed sum differs from the one taken at upload.
  const ResidentTensor& out = s3->tensors.at("out.c");
  ASSERT_EQ(api_->cuMemsetD8(out.ptr + 12345, 0x42, 1), CUDA_SUCCESS);
  DeviceComparison c = g.compare()->compare(DType::kF32, out.ptr, out.ptr, out.numel, {1e-4, 1e-4});
  EXPECT_NE(c.expected_sum, out.sum);
  const ResidentTensor& in = s3->tensors.at("in.a");
  EXPECT_EQ(g.compare()->checksum(DType::kF32, in.ptr, in.numel), in.sum) << "an untouched buffer keeps its sum";
  g.corrupted();
  EXPECT_EQ(g.bytes(), 0);
  EXPECT_EQ(g.corruptions(), 1);
  EXPECT_TRUE(s3->tensors.empty()) << "a check holding the seed now finds nothing resident: it goes to the host";
  EXPECT_TRUE(g.get("dir|3", seed)) << "and the next use uploads it again";
}

}  // namespace
}  // namespace kopt::runner
