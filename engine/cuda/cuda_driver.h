#pragma once

#include <cuda.h>
#include <string>

namespace kwb {

// The CUDA driver API, loaded with dlopen("libcuda.so.1") on first use. Linking the driver (or
// its stub) would stop the app from starting on machines without an NVIDIA driver; with dlopen
// such machines get a clear "no driver" state and everything else keeps working.
class CudaDriver {
public:
    // Loads once, thread-safely; later calls return the same object.
    static const CudaDriver& instance();

    bool loaded() const { return loaded_; }
    const std::string& loadError() const { return loadError_; }

    // "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
    std::string describe(CUresult result) const;

    // Entry points; null when not loaded. Versioned names (_v2) are the ABI the headers map to.
    CUresult (*init)(unsigned int) = nullptr;
    CUresult (*driverGetVersion)(int*) = nullptr;
    CUresult (*deviceGetCount)(int*) = nullptr;
    CUresult (*deviceGet)(CUdevice*, int) = nullptr;
    CUresult (*deviceGetName)(char*, int, CUdevice) = nullptr;
    CUresult (*deviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
    CUresult (*deviceTotalMem)(size_t*, CUdevice) = nullptr;
    CUresult (*devicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
    CUresult (*devicePrimaryCtxRelease)(CUdevice) = nullptr;
    CUresult (*ctxSetCurrent)(CUcontext) = nullptr;
    CUresult (*ctxSynchronize)() = nullptr;
    CUresult (*moduleLoadData)(CUmodule*, const void*) = nullptr;
    CUresult (*moduleUnload)(CUmodule) = nullptr;
    CUresult (*moduleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
    CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**) = nullptr;
    CUresult (*memAlloc)(CUdeviceptr*, size_t) = nullptr;
    CUresult (*memFree)(CUdeviceptr) = nullptr;
    CUresult (*memcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
    CUresult (*memcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
    CUresult (*getErrorName)(CUresult, const char**) = nullptr;
    CUresult (*getErrorString)(CUresult, const char**) = nullptr;

private:
    CudaDriver();
    bool loaded_ = false;
    std::string loadError_;
};

// Formats a driver version integer (13000) as "13.0".
std::string formatCudaVersion(int version);

} // namespace kwb
