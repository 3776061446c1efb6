#include "engine/system/gpu_self_test.h"

#include "engine/cuda/cuda_driver.h"
#include "engine/cuda/gpu_inventory.h"
#include "engine/diagnostics/nvrtc_compiler.h"

#include <chrono>
#include <cmath>
#include <random>
#include <vector>

namespace kwb {
namespace {

constexpr const char* kKernel = R"CU(
extern "C" __global__ void fused_axpby_relu(const float* x, const float* y, float* out,
                                             float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a * x[i] + b * y[i];
        out[i] = v > 0.0f ? v : 0.0f;
    }
}
)CU";

// Releases whatever was acquired, in reverse order, on every exit path.
struct DeviceSession {
    const CudaDriver& cu;
    CUdevice device = 0;
    bool contextRetained = false;
    CUmodule module = nullptr;
    std::vector<CUdeviceptr> buffers;

    ~DeviceSession() {
        for (CUdeviceptr p : buffers)
            cu.memFree(p);
        if (module)
            cu.moduleUnload(module);
        if (contextRetained)
            cu.devicePrimaryCtxRelease(device);
    }
};

} // namespace

GpuSelfTestResult runGpuSelfTest(int n) {
    GpuSelfTestResult result;
    GpuInventory inventory = detectGpus();
    if (!inventory.hasGpu()) {
        result.message = inventory.status;
        return result;
    }
    const GpuDevice& gpu = inventory.devices.front();
    result.ran = true;
    result.deviceName = gpu.name;
    result.arch = gpu.arch();
    const CudaDriver& cu = CudaDriver::instance();
    DeviceSession session{cu, 0, false, nullptr, {}};

    auto fail = [&](const std::string& what, CUresult rc) {
        result.message = what + ": " + cu.describe(rc);
        return result;
    };

    auto compileStart = std::chrono::steady_clock::now();
    NvrtcResult compiled = compileWithNvrtc({kKernel, "self_test.cu", gpu.arch(), {}, {}});
    result.compileMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - compileStart)
            .count();
    if (!compiled.success || compiled.cubin.empty()) {
        result.message = "NVRTC failed for " + gpu.arch() + ": " + compiled.log;
        return result;
    }

    CUresult rc = cu.deviceGet(&session.device, gpu.ordinal);
    if (rc != CUDA_SUCCESS)
        return fail("cuDeviceGet", rc);
    CUcontext context = nullptr;
    if ((rc = cu.devicePrimaryCtxRetain(&context, session.device)) != CUDA_SUCCESS)
        return fail("cuDevicePrimaryCtxRetain", rc);
    session.contextRetained = true;
    if ((rc = cu.ctxSetCurrent(context)) != CUDA_SUCCESS)
        return fail("cuCtxSetCurrent", rc);
    if ((rc = cu.moduleLoadData(&session.module, compiled.cubin.data())) != CUDA_SUCCESS)
        return fail("cuModuleLoadData", rc);
    CUfunction function = nullptr;
    if ((rc = cu.moduleGetFunction(&function, session.module, "fused_axpby_relu")) != CUDA_SUCCESS)
        return fail("cuModuleGetFunction", rc);

    std::mt19937 rng(12345);
    std::normal_distribution<float> normal;
    std::vector<float> x(n), y(n), out(n, std::nanf(""));
    for (int i = 0; i < n; ++i) {
        x[i] = normal(rng);
        y[i] = normal(rng);
    }
    const size_t bytes = sizeof(float) * static_cast<size_t>(n);
    CUdeviceptr dx = 0, dy = 0, dout = 0;
    for (CUdeviceptr* p : {&dx, &dy, &dout}) {
        if ((rc = cu.memAlloc(p, bytes)) != CUDA_SUCCESS)
            return fail("cuMemAlloc", rc);
        session.buffers.push_back(*p);
    }
    if ((rc = cu.memcpyHtoD(dx, x.data(), bytes)) != CUDA_SUCCESS ||
        (rc = cu.memcpyHtoD(dy, y.data(), bytes)) != CUDA_SUCCESS ||
        // Poisoned output: an element the kernel fails to write shows up as NaN below.
        (rc = cu.memcpyHtoD(dout, out.data(), bytes)) != CUDA_SUCCESS)
        return fail("cuMemcpyHtoD", rc);

    float a = 1.5f, b = -0.75f;
    void* args[] = {&dx, &dy, &dout, &a, &b, &n};
    const unsigned block = 256;
    const unsigned grid = static_cast<unsigned>((n + block - 1) / block);
    if ((rc = cu.launchKernel(function, grid, 1, 1, block, 1, 1, 0, nullptr, args, nullptr)) !=
        CUDA_SUCCESS)
        return fail("cuLaunchKernel", rc);
    if ((rc = cu.ctxSynchronize()) != CUDA_SUCCESS)
        return fail("kernel execution", rc);
    if ((rc = cu.memcpyDtoH(out.data(), dout, bytes)) != CUDA_SUCCESS)
        return fail("cuMemcpyDtoH", rc);

    for (int i = 0; i < n; ++i) {
        float expected = std::max(0.0f, a * x[i] + b * y[i]);
        double error = std::fabs(static_cast<double>(out[i]) - expected);
        if (std::isnan(out[i]))
            error = INFINITY;
        result.maxAbsError = std::max(result.maxAbsError, error);
    }
    result.passed = result.maxAbsError <= 1e-5;
    result.message = (result.passed ? "passed: " : "FAILED: ") + std::to_string(n) +
                     " elements on " + gpu.name + " (" + gpu.arch() + "), max abs error " +
                     std::to_string(result.maxAbsError);
    return result;
}

} // namespace kwb
