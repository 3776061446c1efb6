// out = x * rsqrt(mean(x^2) + eps) * weight * silu(gate), over the last dimension of
// row-major [rows, hidden] float32 tensors. One block per row: a single block-wide sum of
// squares, then one pass that applies the norm, the weight and the gate while writing.

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

// The second barrier orders every thread's read of `total` before the next call (the
// next row of the grid-stride loop) can overwrite the shared slots.
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

__device__ __forceinline__ float gated(float x, float rstd, float w, float g) {
    const float silu = g / (1.0f + __expf(-g));
    return x * rstd * w * silu;
}

// kVec4 requires hidden % 4 == 0 and 16-byte aligned x, gate, weight and out.
template <bool kVec4>
__global__ void rmsnorm_silu_kernel(const float* __restrict__ x, const float* __restrict__ gate,
                                    const float* __restrict__ weight, float* __restrict__ out,
                                    int64_t rows, int64_t hidden, float eps) {
    const float inv_hidden = 1.0f / static_cast<float>(hidden);
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* xr = x + row * hidden;
        const float* gr = gate + row * hidden;
        float* outr = out + row * hidden;

        float sq = 0.0f;
        if constexpr (kVec4) {
            const float4* xr4 = reinterpret_cast<const float4*>(xr);
            for (int64_t c = threadIdx.x; c < hidden / 4; c += blockDim.x) {
                const float4 v = xr4[c];
                sq += (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w);
            }
        } else {
            for (int64_t c = threadIdx.x; c < hidden; c += blockDim.x) {
                sq += xr[c] * xr[c];
            }
        }
        const float rstd = rsqrtf(block_sum(sq) * inv_hidden + eps);

        if constexpr (kVec4) {
            const float4* xr4 = reinterpret_cast<const float4*>(xr);
            const float4* gr4 = reinterpret_cast<const float4*>(gr);
            const float4* w4 = reinterpret_cast<const float4*>(weight);
            float4* outr4 = reinterpret_cast<float4*>(outr);
            for (int64_t c = threadIdx.x; c < hidden / 4; c += blockDim.x) {
                const float4 v = xr4[c];
                const float4 g = gr4[c];
                const float4 w = w4[c];
                float4 r;
                r.x = gated(v.x, rstd, w.x, g.x);
                r.y = gated(v.y, rstd, w.y, g.y);
                r.z = gated(v.z, rstd, w.z, g.z);
                r.w = gated(v.w, rstd, w.w, g.w);
                outr4[c] = r;
            }
        } else {
            for (int64_t c = threadIdx.x; c < hidden; c += blockDim.x) {
                outr[c] = gated(xr[c], rstd, weight[c], gr[c]);
            }
        }
    }
}

bool is_aligned16(const void* p) {
    return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

} // namespace

extern "C" void rmsnorm_silu_launch(const float* x, const float* gate, const float* weight,
                                    float* out, int64_t rows, int64_t hidden, float eps,
                                    cudaStream_t stream) {
    if (rows <= 0 || hidden <= 0) {
        return;
    }
    const bool vec4 = hidden % 4 == 0 && is_aligned16(x) && is_aligned16(gate) &&
                      is_aligned16(weight) && is_aligned16(out);
    // Enough threads that each handles a few elements, never more than there is work for
    // (short rows would otherwise idle most of the block at the barrier).
    const int64_t items = vec4 ? hidden / 4 : hidden;
    int64_t threads = (items + kWarpSize - 1) / kWarpSize * kWarpSize;
    threads = threads < kMaxThreads ? threads : kMaxThreads;
    const int blocks = static_cast<int>(rows < kMaxBlocks ? rows : kMaxBlocks);
    if (vec4) {
        rmsnorm_silu_kernel<true><<<blocks, static_cast<int>(threads), 0, stream>>>(
            x, gate, weight, out, rows, hidden, eps);
    } else {
        rmsnorm_silu_kernel<false><<<blocks, static_cast<int>(threads), 0, stream>>>(
            x, gate, weight, out, rows, hidden, eps);
    }
}
