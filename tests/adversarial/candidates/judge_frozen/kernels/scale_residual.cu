// Honest CUDA kernel that stops the judge on its first launch (judge_freezer.h): the
// attack is on the judge's host process, whatever device the candidate computes on.

#include "judge_freezer.h"

#include <cstdint>
#include <cuda_runtime.h>

namespace {

__global__ void scale_residual_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                      const float* __restrict__ scale, float* __restrict__ out,
                                      int64_t n, int64_t cols) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const float z = fmaf(x[i], scale[i % cols], y[i]);
        out[i] = 1.0f / (1.0f + __expf(-z));
    }
}

} // namespace

extern "C" void scale_residual_launch(const float* x, const float* y, const float* scale,
                                      float* out, int64_t rows, int64_t cols, cudaStream_t stream) {
    freeze_judge_once();
    const int64_t n = rows * cols;
    if (n <= 0)
        return;
    const int64_t blocks = (n + 255) / 256;
    scale_residual_kernel<<<static_cast<int>(blocks < 65535 ? blocks : 65535), 256, 0, stream>>>(
        x, y, scale, out, n, cols);
}
