#include "device/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

namespace kopt::device {

namespace {

template <typename F>
bool resolve(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(::dlsym(lib, name));
  if (!fn) {
    if (!missing.empty()) missing += ", ";
    missing += name;
  }
  return fn != nullptr;
}

}  // namespace

Result<const DriverApi*> load_driver() {
  static DriverApi api{};
  static std::string load_error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
      const char* e = ::dlerror();
      load_error = std::string("no CUDA driver: cannot load libcuda.so.1 (") + (e ? e : "unknown") +
                   "); this machine has no NVIDIA GPU driver";
      return;
    }
    std::string missing;
    resolve(lib, "cuInit", api.cuInit, missing);
    resolve(lib, "cuDriverGetVersion", api.cuDriverGetVersion, missing);
    resolve(lib, "cuDeviceGetCount", api.cuDeviceGetCount, missing);
    resolve(lib, "cuDeviceGet", api.cuDeviceGet, missing);
    resolve(lib, "cuDeviceGetName", api.cuDeviceGetName, missing);
    resolve(lib, "cuDeviceGetAttribute", api.cuDeviceGetAttribute, missing);
    resolve(lib, "cuDeviceTotalMem_v2", api.cuDeviceTotalMem, missing);
    resolve(lib, "cuDeviceGetUuid", api.cuDeviceGetUuid, missing);
    resolve(lib, "cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain, missing);
    resolve(lib, "cuDevicePrimaryCtxRelease_v2", api.cuDevicePrimaryCtxRelease, missing);
    resolve(lib, "cuCtxSetCurrent", api.cuCtxSetCurrent, missing);
    resolve(lib, "cuCtxSynchronize", api.cuCtxSynchronize, missing);
    resolve(lib, "cuMemGetInfo_v2", api.cuMemGetInfo, missing);
    resolve(lib, "cuMemAlloc_v2", api.cuMemAlloc, missing);
    resolve(lib, "cuMemFree_v2", api.cuMemFree, missing);
    resolve(lib, "cuMemcpyHtoD_v2", api.cuMemcpyHtoD, missing);
    resolve(lib, "cuMemcpyDtoH_v2", api.cuMemcpyDtoH, missing);
    resolve(lib, "cuMemcpyDtoD_v2", api.cuMemcpyDtoD, missing);
    resolve(lib, "cuMemsetD8_v2", api.cuMemsetD8, missing);
    resolve(lib, "cuMemsetD32_v2", api.cuMemsetD32, missing);
    resolve(lib, "cuEventCreate", api.cuEventCreate, missing);
    resolve(lib, "cuEventRecord", api.cuEventRecord, missing);
    resolve(lib, "cuEventSynchronize", api.cuEventSynchronize, missing);
    resolve(lib, "cuEventElapsedTime", api.cuEventElapsedTime, missing);
    resolve(lib, "cuEventDestroy_v2", api.cuEventDestroy, missing);
    resolve(lib, "cuGetErrorString", api.cuGetErrorString, missing);
    resolve(lib, "cuGetErrorName", api.cuGetErrorName, missing);
    resolve(lib, "cuProfilerStart", api.cuProfilerStart, missing);
    resolve(lib, "cuProfilerStop", api.cuProfilerStop, missing);
    resolve(lib, "cuModuleLoad", api.cuModuleLoad, missing);
    resolve(lib, "cuModuleGetFunction", api.cuModuleGetFunction, missing);
    resolve(lib, "cuLaunchKernel", api.cuLaunchKernel, missing);
    resolve(lib, "cuModuleLoadData", api.cuModuleLoadData, missing);
    resolve(lib, "cuModuleUnload", api.cuModuleUnload, missing);
    resolve(lib, "cuMemHostAlloc", api.cuMemHostAlloc, missing);
    resolve(lib, "cuMemHostGetDevicePointer_v2", api.cuMemHostGetDevicePointer, missing);
    resolve(lib, "cuMemFreeHost", api.cuMemFreeHost, missing);
    resolve(lib, "cuMemsetD32Async", api.cuMemsetD32Async, missing);
    resolve(lib, "cuMemcpyDtoHAsync_v2", api.cuMemcpyDtoHAsync, missing);
    resolve(lib, "cuStreamCreate", api.cuStreamCreate, missing);
    resolve(lib, "cuStreamDestroy_v2", api.cuStreamDestroy, missing);
    resolve(lib, "cuStreamSynchronize", api.cuStreamSynchronize, missing);
    resolve(lib, "cuEventQuery", api.cuEventQuery, missing);
    resolve(lib, "cuFuncSetAttribute", api.cuFuncSetAttribute, missing);
    resolve(lib, "cuMemcpyDtoDAsync_v2", api.cuMemcpyDtoDAsync, missing);
    resolve(lib, "cuCtxResetPersistingL2Cache", api.cuCtxResetPersistingL2Cache, missing);
    resolve(lib, "cuCtxGetLimit", api.cuCtxGetLimit, missing);
    resolve(lib, "cuCtxSetLimit", api.cuCtxSetLimit, missing);
    resolve(lib, "cuStreamGetAttribute", api.cuStreamGetAttribute, missing);
    resolve(lib, "cuStreamSetAttribute", api.cuStreamSetAttribute, missing);
    std::string optional;  // absent ones stay null
    resolve(lib, "cuMemHostRegister_v2", api.cuMemHostRegister, optional);
    resolve(lib, "cuMemHostUnregister", api.cuMemHostUnregister, optional);
    if (!missing.empty()) load_error = "libcuda.so.1 lacks: " + missing + " (driver too old?)";
  });
  if (!load_error.empty()) return gate_error(load_error);
  return &api;
}

std::string error_text(const DriverApi& api, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName) api.cuGetErrorName(r, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(r, &text);
  return std::string(name ? name : "CUDA_ERROR_?") + ": " + (text ? text : "unknown error") + " (" +
         std::to_string(static_cast<int>(r)) + ")";
}

}  // namespace kopt::device
