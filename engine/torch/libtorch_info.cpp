#include "engine/torch/libtorch_info.h"

#include <torch/torch.h>

namespace kwb {

std::string libtorchSummary() {
    // Counting devices needs the CUDA part of libtorch; a CPU-only machine reports zero.
    const auto count = torch::cuda::device_count();
    return std::string("libtorch ") + TORCH_VERSION + " (" + std::to_string(count) +
           " CUDA device(s) visible)";
}

} // namespace kwb
