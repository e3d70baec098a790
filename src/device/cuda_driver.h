#pragma once
// The CUDA driver library (libcuda.so.1), loaded at run time so one kopt binary works on machines with and
// without a GPU. Only cuda.h's types are used at compile time; nothing links against libcuda.
#include <cuda.h>

#include <string>

#include "core/result.h"

namespace kopt::device {

struct DriverApi {
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
  CUresult (*cuDeviceGetUuid)(CUuuid*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemGetInfo)(size_t*, size_t*);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned int, size_t);
  CUresult (*cuEventCreate)(CUevent*, unsigned int);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuProfilerStart)();
  CUresult (*cuProfilerStop)();
  CUresult (*cuModuleLoad)(CUmodule*, const char*);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**);
  // Launch-free timing (runner/timer.h): the blocker kernel from embedded PTX, its host-mapped flag, a private
  // non-blocking stream to look at outputs while the default stream is held.
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuMemHostAlloc)(void**, size_t, unsigned int);
  CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr*, void*, unsigned int);
  CUresult (*cuMemFreeHost)(void*);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned int, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*cuStreamCreate)(CUstream*, unsigned int);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventQuery)(CUevent);
  // The sanitizer gate's shared-memory fill (runner/smem_fill.h): the opt-in dynamic shared memory size.
  CUresult (*cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int);
  // The evidence rules (runner/fresh_inputs.h, runner/timer.h): input rotation between timed samples, and the L2
  // persisting carve-out reset before each sample (a candidate cannot keep its data in L2 across calls).
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuCtxResetPersistingL2Cache)();
  CUresult (*cuCtxGetLimit)(size_t*, CUlimit);
  CUresult (*cuCtxSetLimit)(CUlimit, size_t);
  CUresult (*cuStreamGetAttribute)(CUstream, CUstreamAttrID, CUstreamAttrValue*);
  CUresult (*cuStreamSetAttribute)(CUstream, CUstreamAttrID, const CUstreamAttrValue*);
  // Pinning the host buffer checks download into (runner/shared_buffer.h, shared with the judge). Optional (null when
  // the driver lacks them): a download into unpinned memory is slower, not wrong.
  CUresult (*cuMemHostRegister)(void*, size_t, unsigned int);
  CUresult (*cuMemHostUnregister)(void*);
};

// Loads libcuda.so.1 once and resolves the table. Error (exit 3) when no driver is installed.
Result<const DriverApi*> load_driver();

// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"
std::string error_text(const DriverApi& api, CUresult r);

}  // namespace kopt::device
