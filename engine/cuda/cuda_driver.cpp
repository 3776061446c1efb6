#include "engine/cuda/cuda_driver.h"

#include <cstdlib>
#include <dlfcn.h>

namespace kwb {
namespace {

template <typename Fn>
bool resolve(void* handle, const char* symbol, Fn& target, std::string& missing) {
    target = reinterpret_cast<Fn>(dlsym(handle, symbol));
    if (!target) {
        missing += missing.empty() ? symbol : std::string(", ") + symbol;
        return false;
    }
    return true;
}

} // namespace

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
    resolve(handle, "cuInit", init, missing);
    resolve(handle, "cuDriverGetVersion", driverGetVersion, missing);
    resolve(handle, "cuDeviceGetCount", deviceGetCount, missing);
    resolve(handle, "cuDeviceGet", deviceGet, missing);
    resolve(handle, "cuDeviceGetName", deviceGetName, missing);
    resolve(handle, "cuDeviceGetAttribute", deviceGetAttribute, missing);
    resolve(handle, "cuDeviceTotalMem_v2", deviceTotalMem, missing);
    resolve(handle, "cuDevicePrimaryCtxRetain", devicePrimaryCtxRetain, missing);
    resolve(handle, "cuDevicePrimaryCtxRelease_v2", devicePrimaryCtxRelease, missing);
    resolve(handle, "cuCtxSetCurrent", ctxSetCurrent, missing);
    resolve(handle, "cuCtxSynchronize", ctxSynchronize, missing);
    resolve(handle, "cuModuleLoadData", moduleLoadData, missing);
    resolve(handle, "cuModuleUnload", moduleUnload, missing);
    resolve(handle, "cuModuleGetFunction", moduleGetFunction, missing);
    resolve(handle, "cuLaunchKernel", launchKernel, missing);
    resolve(handle, "cuMemAlloc_v2", memAlloc, missing);
    resolve(handle, "cuMemFree_v2", memFree, missing);
    resolve(handle, "cuMemcpyHtoD_v2", memcpyHtoD, missing);
    resolve(handle, "cuMemcpyDtoH_v2", memcpyDtoH, missing);
    resolve(handle, "cuGetErrorName", getErrorName, missing);
    resolve(handle, "cuGetErrorString", getErrorString, missing);
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
