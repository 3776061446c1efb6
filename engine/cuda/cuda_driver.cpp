#include "engine/cuda/cuda_driver.h"

#include "engine/cuda/dl_symbol.h"

#include <cstdlib>
#include <dlfcn.h>

namespace kwb {

const CudaDriver& CudaDriver::instance() {
    static const CudaDriver driver;
    return driver;
}

CudaDriver::CudaDriver() {
    // KWB_DISABLE_GPU lets tests and users exercise the no-GPU path on a GPU machine.
    if (const char* off = std::getenv("KWB_DISABLE_GPU"); off && *off && std::string(off) != "0") {
        loadError_ = "GPU use disabled by KWB_DISABLE_GPU";
        return;
    }
    void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        loadError_ = std::string("NVIDIA driver not found (") + (why ? why : "unknown error") + ")";
        return;
    }
    std::string missing;
    resolveSymbol(handle, "cuInit", init, missing);
    resolveSymbol(handle, "cuDriverGetVersion", driverGetVersion, missing);
    resolveSymbol(handle, "cuDeviceGetCount", deviceGetCount, missing);
    resolveSymbol(handle, "cuDeviceGet", deviceGet, missing);
    resolveSymbol(handle, "cuDeviceGetName", deviceGetName, missing);
    resolveSymbol(handle, "cuDeviceGetAttribute", deviceGetAttribute, missing);
    resolveSymbol(handle, "cuDeviceTotalMem_v2", deviceTotalMem, missing);
    resolveSymbol(handle, "cuDevicePrimaryCtxRetain", devicePrimaryCtxRetain, missing);
    resolveSymbol(handle, "cuDevicePrimaryCtxRelease_v2", devicePrimaryCtxRelease, missing);
    resolveSymbol(handle, "cuCtxSetCurrent", ctxSetCurrent, missing);
    resolveSymbol(handle, "cuCtxSynchronize", ctxSynchronize, missing);
    resolveSymbol(handle, "cuModuleLoadData", moduleLoadData, missing);
    resolveSymbol(handle, "cuModuleUnload", moduleUnload, missing);
    resolveSymbol(handle, "cuModuleGetFunction", moduleGetFunction, missing);
    resolveSymbol(handle, "cuLaunchKernel", launchKernel, missing);
    resolveSymbol(handle, "cuMemAlloc_v2", memAlloc, missing);
    resolveSymbol(handle, "cuMemFree_v2", memFree, missing);
    resolveSymbol(handle, "cuMemcpyHtoD_v2", memcpyHtoD, missing);
    resolveSymbol(handle, "cuMemcpyDtoH_v2", memcpyDtoH, missing);
    resolveSymbol(handle, "cuGetErrorName", getErrorName, missing);
    resolveSymbol(handle, "cuGetErrorString", getErrorString, missing);
    if (!missing.empty()) {
        loadError_ = "libcuda.so.1 is too old or incomplete (missing " + missing + ")";
        return; // the handle stays open: unloading a driver library mid-process is unsafe
    }
    loaded_ = true;
}

std::string CudaDriver::describe(CUresult result) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (getErrorName)
        getErrorName(result, &name);
    if (getErrorString)
        getErrorString(result, &text);
    std::string out = name ? name : "CUDA error " + std::to_string(static_cast<int>(result));
    if (text)
        out += std::string(": ") + text;
    return out;
}

std::string formatCudaVersion(int version) {
    if (version <= 0)
        return "unknown";
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

} // namespace kwb
