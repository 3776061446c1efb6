// Softmax over the last dimension of a row-major [rows, cols] float32 tensor.
//
// Each row is read twice: once to build a running (max, sum of exp) pair, once to write
// exp(x - max) / sum. Keeping the max and the sum in one online pass saves a full read
// of the row compared with the textbook max / sum / normalize sequence.

#include <cstdint>
#include <cuda_runtime.h>

namespace {

constexpr int kWarpSize = 32;
// Rows up to this length are handled by a single warp: a whole block per short row
// would leave most threads idle and pay for block-level synchronization.
constexpr int64_t kWarpRowMaxCols = 1024;
constexpr int kWarpKernelThreads = 128;
constexpr int kBlockKernelThreads = 512;
constexpr int64_t kMaxBlocks = 65535;

struct MaxSum {
    float max;
    float sum; // sum of exp(x - max)
};

// Rescales the smaller partial sum onto the larger maximum. A -inf maximum means the
// partial has only seen -inf (or nothing); treating it specially avoids inf - inf = NaN.
__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
    const float m = fmaxf(a.max, b.max);
    if (m == -INFINITY) {
        return {m, 0.0f};
    }
    const float sa = a.max == -INFINITY ? 0.0f : a.sum * __expf(a.max - m);
    const float sb = b.max == -INFINITY ? 0.0f : b.sum * __expf(b.max - m);
    return {m, sa + sb};
}

__device__ __forceinline__ void accumulate(MaxSum& acc, float v) {
    if (v > acc.max) {
        acc.sum = acc.sum * __expf(acc.max - v) + 1.0f;
        acc.max = v;
    } else if (acc.max != -INFINITY) {
        acc.sum += __expf(v - acc.max);
    }
}

__device__ __forceinline__ MaxSum warp_all_reduce(MaxSum v) {
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
        MaxSum other;
        other.max = __shfl_xor_sync(0xffffffffu, v.max, offset);
        other.sum = __shfl_xor_sync(0xffffffffu, v.sum, offset);
        v = merge(v, other);
    }
    return v;
}

// One warp per row; rows are independent so no shared memory or barriers are needed.
__global__ void softmax_warp_kernel(const float* __restrict__ x, float* __restrict__ y,
                                    int64_t rows, int64_t cols) {
    const int lane = threadIdx.x % kWarpSize;
    const int64_t warps_per_block = blockDim.x / kWarpSize;
    const int64_t first_row =
        static_cast<int64_t>(blockIdx.x) * warps_per_block + threadIdx.x / kWarpSize;
    for (int64_t row = first_row; row < rows; row += gridDim.x * warps_per_block) {
        const float* xr = x + row * cols;
        float* yr = y + row * cols;
        MaxSum acc{-INFINITY, 0.0f};
        for (int64_t c = lane; c < cols; c += kWarpSize) {
            accumulate(acc, xr[c]);
        }
        acc = warp_all_reduce(acc);
        const float inv_sum = 1.0f / acc.sum;
        for (int64_t c = lane; c < cols; c += kWarpSize) {
            yr[c] = __expf(xr[c] - acc.max) * inv_sum;
        }
    }
}

// Block-wide all-reduce of the (max, sum) pair: shuffles inside each warp, then one
// warp combines the per-warp partials. Safe to call repeatedly in a loop because the
// second barrier orders the broadcast read before the next call's writes.
__device__ MaxSum block_all_reduce(MaxSum v) {
    __shared__ MaxSum partial[32];
    __shared__ MaxSum result;
    const int lane = threadIdx.x % kWarpSize;
    const int warp = threadIdx.x / kWarpSize;
    v = warp_all_reduce(v);
    if (lane == 0) {
        partial[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        const int num_warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
        MaxSum w = lane < num_warps ? partial[lane] : MaxSum{-INFINITY, 0.0f};
        w = warp_all_reduce(w);
        if (lane == 0) {
            result = w;
        }
    }
    __syncthreads();
    return result;
}

// One block per long row. With kVec4 the row is accessed as float4, which needs cols to
// be a multiple of 4 and 16-byte aligned base pointers (checked by the launcher).
template <bool kVec4>
__global__ void softmax_block_kernel(const float* __restrict__ x, float* __restrict__ y,
                                     int64_t rows, int64_t cols) {
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* xr = x + row * cols;
        float* yr = y + row * cols;
        MaxSum acc{-INFINITY, 0.0f};
        if constexpr (kVec4) {
            const float4* xr4 = reinterpret_cast<const float4*>(xr);
            for (int64_t c = threadIdx.x; c < cols / 4; c += blockDim.x) {
                const float4 v = xr4[c];
                accumulate(acc, v.x);
                accumulate(acc, v.y);
                accumulate(acc, v.z);
                accumulate(acc, v.w);
            }
        } else {
            for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
                accumulate(acc, xr[c]);
            }
        }
        const MaxSum total = block_all_reduce(acc);
        const float inv_sum = 1.0f / total.sum;
        if constexpr (kVec4) {
            const float4* xr4 = reinterpret_cast<const float4*>(xr);
            float4* yr4 = reinterpret_cast<float4*>(yr);
            for (int64_t c = threadIdx.x; c < cols / 4; c += blockDim.x) {
                float4 v = xr4[c];
                v.x = __expf(v.x - total.max) * inv_sum;
                v.y = __expf(v.y - total.max) * inv_sum;
                v.z = __expf(v.z - total.max) * inv_sum;
                v.w = __expf(v.w - total.max) * inv_sum;
                yr4[c] = v;
            }
        } else {
            for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
                yr[c] = __expf(xr[c] - total.max) * inv_sum;
            }
        }
    }
}

int capped_blocks(int64_t blocks) {
    return static_cast<int>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

} // namespace

extern "C" void softmax_launch(const float* x, float* y, int64_t rows, int64_t cols,
                               cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) {
        return;
    }
    if (cols <= kWarpRowMaxCols) {
        const int64_t warps_per_block = kWarpKernelThreads / kWarpSize;
        const int blocks = capped_blocks((rows + warps_per_block - 1) / warps_per_block);
        softmax_warp_kernel<<<blocks, kWarpKernelThreads, 0, stream>>>(x, y, rows, cols);
        return;
    }
    const bool vec4 = cols % 4 == 0 && (reinterpret_cast<uintptr_t>(x) & 15u) == 0 &&
                      (reinterpret_cast<uintptr_t>(y) & 15u) == 0;
    const int blocks = capped_blocks(rows);
    if (vec4) {
        softmax_block_kernel<true><<<blocks, kBlockKernelThreads, 0, stream>>>(x, y, rows, cols);
    } else {
        softmax_block_kernel<false><<<blocks, kBlockKernelThreads, 0, stream>>>(x, y, rows, cols);
    }
}
