// LayerNorm over the last dimension of a row-major [rows, hidden] float32 tensor, with
// elementwise affine weight and bias.
//
// One block per row. The mean and the variance are computed in two separate reductions
// (variance of the centred values) rather than from E[x^2] - E[x]^2, which loses most of
// its precision when |mean| is large compared with the spread. The extra passes re-read
// the row from L1/L2, so they cost little next to the single trip to HBM.

#include <cstdint>
#include <cuda_runtime.h>

namespace {

constexpr int kWarpSize = 32;
constexpr int kMaxThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    }
    return v;
}

// The second barrier orders every thread's read of `total` before the next call can
// overwrite the shared slots, so the function can be called back to back.
__device__ float block_sum(float v) {
    __shared__ float partial[32];
    __shared__ float total;
    const int lane = threadIdx.x % kWarpSize;
    const int warp = threadIdx.x / kWarpSize;
    v = warp_sum(v);
    if (lane == 0) {
        partial[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        const int num_warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
        float w = lane < num_warps ? partial[lane] : 0.0f;
        w = warp_sum(w);
        if (lane == 0) {
            total = w;
        }
    }
    __syncthreads();
    return total;
}

// kVec4 requires hidden % 4 == 0 and 16-byte aligned x, y, weight and bias.
template <bool kVec4>
__global__ void layernorm_kernel(const float* __restrict__ x, const float* __restrict__ weight,
                                 const float* __restrict__ bias, float* __restrict__ y,
                                 int64_t rows, int64_t hidden, float eps) {
    const float inv_hidden = 1.0f / static_cast<float>(hidden);
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* xr = x + row * hidden;
        float* yr = y + row * hidden;

        float sum = 0.0f;
        if constexpr (kVec4) {
            const float4* xr4 = reinterpret_cast<const float4*>(xr);
            for (int64_t c = threadIdx.x; c < hidden / 4; c += blockDim.x) {
                const float4 v = xr4[c];
                sum += (v.x + v.y) + (v.z + v.w);
            }
        } else {
            for (int64_t c = threadIdx.x; c < hidden; c += blockDim.x) {
                sum += xr[c];
            }
        }
        const float mean = block_sum(sum) * inv_hidden;

        float sq = 0.0f;
        if constexpr (kVec4) {
            const float4* xr4 = reinterpret_cast<const float4*>(xr);
            for (int64_t c = threadIdx.x; c < hidden / 4; c += blockDim.x) {
                const float4 v = xr4[c];
                const float dx = v.x - mean;
                const float dy = v.y - mean;
                const float dz = v.z - mean;
                const float dw = v.w - mean;
                sq += (dx * dx + dy * dy) + (dz * dz + dw * dw);
            }
        } else {
            for (int64_t c = threadIdx.x; c < hidden; c += blockDim.x) {
                const float d = xr[c] - mean;
                sq += d * d;
            }
        }
        const float rstd = rsqrtf(block_sum(sq) * inv_hidden + eps);

        if constexpr (kVec4) {
            const float4* xr4 = reinterpret_cast<const float4*>(xr);
            const float4* w4 = reinterpret_cast<const float4*>(weight);
            const float4* b4 = reinterpret_cast<const float4*>(bias);
            float4* yr4 = reinterpret_cast<float4*>(yr);
            for (int64_t c = threadIdx.x; c < hidden / 4; c += blockDim.x) {
                const float4 v = xr4[c];
                const float4 w = w4[c];
                const float4 b = b4[c];
                float4 out;
                out.x = (v.x - mean) * rstd * w.x + b.x;
                out.y = (v.y - mean) * rstd * w.y + b.y;
                out.z = (v.z - mean) * rstd * w.z + b.z;
                out.w = (v.w - mean) * rstd * w.w + b.w;
                yr4[c] = out;
            }
        } else {
            for (int64_t c = threadIdx.x; c < hidden; c += blockDim.x) {
                yr[c] = (xr[c] - mean) * rstd * weight[c] + bias[c];
            }
        }
    }
}

bool is_aligned16(const void* p) {
    return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

} // namespace

extern "C" void layernorm_launch(const float* x, const float* weight, const float* bias, float* y,
                                 int64_t rows, int64_t hidden, float eps, cudaStream_t stream) {
    if (rows <= 0 || hidden <= 0) {
        return;
    }
    const bool vec4 = hidden % 4 == 0 && is_aligned16(x) && is_aligned16(weight) &&
                      is_aligned16(bias) && is_aligned16(y);
    // Enough threads that each handles a few elements, never more than there is work for
    // (short rows would otherwise idle most of the block at every barrier).
    const int64_t per_thread_items = vec4 ? hidden / 4 : hidden;
    int64_t threads = (per_thread_items + kWarpSize - 1) / kWarpSize * kWarpSize;
    threads = threads < kMaxThreads ? threads : kMaxThreads;
    const int blocks = static_cast<int>(rows < kMaxBlocks ? rows : kMaxBlocks);
    if (vec4) {
        layernorm_kernel<true><<<blocks, static_cast<int>(threads), 0, stream>>>(x, weight, bias, y,
                                                                                 rows, hidden, eps);
    } else {
        layernorm_kernel<false><<<blocks, static_cast<int>(threads), 0, stream>>>(
            x, weight, bias, y, rows, hidden, eps);
    }
}
