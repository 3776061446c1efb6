#include "engine/cuda/gpu_inventory.h"

#include "engine/cuda/cuda_driver.h"

namespace kwb {

GpuInventory detectGpus() {
    GpuInventory inventory;
    const CudaDriver& cu = CudaDriver::instance();
    if (!cu.loaded()) {
        inventory.status = "No GPU: " + cu.loadError();
        return inventory;
    }
    inventory.driverLoaded = true;
    cu.driverGetVersion(&inventory.driverVersion);
    if (CUresult rc = cu.init(0); rc != CUDA_SUCCESS) {
        inventory.status = "No GPU: driver " + formatCudaVersion(inventory.driverVersion) +
                           " loaded but cuInit failed (" + cu.describe(rc) + ")";
        return inventory;
    }
    int count = 0;
    cu.deviceGetCount(&count);
    for (int i = 0; i < count; ++i) {
        CUdevice device = 0;
        if (cu.deviceGet(&device, i) != CUDA_SUCCESS)
            continue;
        GpuDevice gpu;
        gpu.ordinal = i;
        char name[256] = {};
        cu.deviceGetName(name, sizeof name, device);
        gpu.name = name;
        cu.deviceGetAttribute(&gpu.computeMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                              device);
        cu.deviceGetAttribute(&gpu.computeMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                              device);
        cu.deviceGetAttribute(&gpu.multiprocessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                              device);
        cu.deviceTotalMem(&gpu.totalMemoryBytes, device);
        inventory.devices.push_back(gpu);
    }
    if (inventory.devices.empty()) {
        inventory.status = "No GPU: driver " + formatCudaVersion(inventory.driverVersion) +
                           " loaded, no CUDA device visible";
    } else {
        const GpuDevice& first = inventory.devices.front();
        inventory.status = std::to_string(inventory.devices.size()) +
                           (inventory.devices.size() == 1 ? " GPU: " : " GPUs: ") + first.name +
                           " (" + first.arch() + ")";
    }
    return inventory;
}

} // namespace kwb
