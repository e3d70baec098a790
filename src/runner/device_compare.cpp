#include "runner/device_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runner/blocker_ptx.h"
#include "runner/fatal.h"

namespace kopt::runner {

namespace {

// blocker.cu's KoptCompareStats.
struct Stats {
  unsigned long long mismatches, nan_or_inf, poisoned, not_bitwise, max_abs_bits, max_rel_bits, checksum;
  double err2, ref2;
};
static_assert(sizeof(Stats) == 9 * 8);

constexpr unsigned kThreads = 256;

double from_bits(unsigned long long b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

}  // namespace

uint64_t poison_pattern(contract::DType t) {
  uint64_t p = 0;
  for (size_t i = 0; i < contract::dtype_size(t); ++i) p = (p << 8) | poison_byte(t);
  return p;
}

DeviceCompare::DeviceCompare(const device::DriverApi& api) : api_(api) {
  CUdevice dev = 0;
  check_cuda(api_, api_.cuDeviceGet(&dev, 0), "checks on the GPU: cuDeviceGet");
  check_cuda(api_, api_.cuDeviceGetAttribute(&sms_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
             "checks on the GPU: the SM count");
  check_cuda(api_, api_.cuModuleLoadData(&module_, blocker_ptx().data()), "checks on the GPU: cuModuleLoadData");
  check_cuda(api_, api_.cuModuleGetFunction(&compare_, module_, kCompareEntry), "checks on the GPU: the compare kernel");
  check_cuda(api_, api_.cuModuleGetFunction(&equal_, module_, kEqualEntry), "checks on the GPU: the equality kernel");
  check_cuda(api_, api_.cuMemAlloc(&stats_, sizeof(Stats)), "checks on the GPU: cuMemAlloc");
}

DeviceCompare::~DeviceCompare() {
  if (stats_) api_.cuMemFree(stats_);
  if (module_) api_.cuModuleUnload(module_);
}

unsigned DeviceCompare::blocks(int64_t numel) const {
  const int64_t needed = (numel + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(needed, 1, static_cast<int64_t>(std::max(sms_, 1)) * 8));
}

DeviceComparison DeviceCompare::compare(contract::DType t, CUdeviceptr expected, CUdeviceptr actual, int64_t numel,
                                        Tolerance tol) {
  check_cuda(api_, api_.cuMemsetD8(stats_, 0, sizeof(Stats)), "checks on the GPU: clear");
  int type = static_cast<int>(t);
  unsigned long long n = static_cast<unsigned long long>(std::max<int64_t>(numel, 0));
  unsigned long long poison = poison_pattern(t);
  double atol = tol.atol, rtol = tol.rtol;
  void* args[] = {&type, &expected, &actual, &n, &atol, &rtol, &poison, &stats_};
  check_cuda(api_, api_.cuLaunchKernel(compare_, blocks(numel), 1, 1, kThreads, 1, 1, 0, nullptr, args, nullptr),
             "checks on the GPU: compare");
  Stats s{};
  check_cuda(api_, api_.cuMemcpyDtoH(&s, stats_, sizeof s), "checks on the GPU: compare's result");
  DeviceComparison out;
  CompareResult& r = out.result;
  r.numel = numel;
  r.mismatches = static_cast<int64_t>(s.mismatches);
  r.nan_or_inf_mismatches = static_cast<int64_t>(s.nan_or_inf);
  r.bitwise_equal = s.not_bitwise == 0;
  r.still_poisoned = r.bitwise_equal ? 0 : static_cast<int64_t>(s.poisoned);
  r.max_abs_err = from_bits(s.max_abs_bits);
  r.max_rel_err = from_bits(s.max_rel_bits);
  r.rel_l2_err = s.ref2 > 0 ? std::sqrt(s.err2 / s.ref2) : std::sqrt(s.err2);
  r.ok = r.mismatches == 0;
  out.expected_sum = s.checksum;
  return out;
}

DeviceEquality DeviceCompare::equal(contract::DType t, CUdeviceptr reference, CUdeviceptr actual, int64_t numel) {
  check_cuda(api_, api_.cuMemsetD8(stats_, 0, 2 * sizeof(unsigned long long)), "checks on the GPU: clear");
  int es = static_cast<int>(contract::dtype_size(t));
  unsigned long long n = static_cast<unsigned long long>(std::max<int64_t>(numel, 0));
  void* args[] = {&es, &reference, &actual, &n, &stats_};
  check_cuda(api_, api_.cuLaunchKernel(equal_, blocks(numel), 1, 1, kThreads, 1, 1, 0, nullptr, args, nullptr),
             "checks on the GPU: equality");
  unsigned long long w[2] = {0, 0};
  check_cuda(api_, api_.cuMemcpyDtoH(w, stats_, sizeof w), "checks on the GPU: equality's result");
  return {static_cast<int64_t>(w[0]), w[1]};
}

}  // namespace kopt::runner
