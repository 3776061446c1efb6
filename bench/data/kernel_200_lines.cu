// A realistic device-only kernel file for bench/diagnostics_latency.sh: about 200 lines with
// templates, static and dynamic shared memory, warp shuffles, vector loads and atomics, the
// mix a user edits in a workspace. NVRTC takes it as is; `kwb nvrtc --path nvcc` compiles the
// same text with nvcc -c.

#include <cuda_fp16.h>

namespace bench {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kHuge = 3.0e38f; // below any finite input, without <cmath>

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(kFullMask, v, offset);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
    return v;
}

// Sum over a block of BLOCK threads; every thread gets the total.
template <int BLOCK> __device__ float block_sum(float v) {
    static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps");
    __shared__ float partial[BLOCK / 32];
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    v = lane < BLOCK / 32 ? partial[lane] : 0.0f;
    v = warp_sum(v);
    __syncthreads();
    return v;
}

// C = A * B for row-major float matrices with square TILE x TILE shared-memory tiles.
template <int TILE>
__global__ void __launch_bounds__(TILE* TILE)
    tiled_matmul(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                 int m, int n, int k) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE + 1]; // +1 avoids bank conflicts on the column reads
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < k; t += TILE) {
        as[threadIdx.y][threadIdx.x] =
            row < m && t + threadIdx.x < k ? a[row * k + t + threadIdx.x] : 0.0f;
        bs[threadIdx.y][threadIdx.x] =
            col < n && t + threadIdx.y < k ? b[(t + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i)
            acc = fmaf(as[threadIdx.y][i], bs[i][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < m && col < n)
        c[row * n + col] = acc;
}
template __global__ void tiled_matmul<16>(const float*, const float*, float*, int, int, int);
template __global__ void tiled_matmul<32>(const float*, const float*, float*, int, int, int);

// One block per row: numerically stable softmax with the row cached in dynamic shared memory.
extern __shared__ float row_cache[];

template <int BLOCK>
__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols) {
    const float* in = x + static_cast<long>(blockIdx.x) * cols;
    float* out = y + static_cast<long>(blockIdx.x) * cols;
    float local_max = -kHuge;
    for (int i = threadIdx.x; i < cols; i += BLOCK) {
        row_cache[i] = in[i];
        local_max = fmaxf(local_max, row_cache[i]);
    }
    __shared__ float shared_max[BLOCK / 32];
    local_max = warp_max(local_max);
    if (threadIdx.x % 32 == 0)
        shared_max[threadIdx.x / 32] = local_max;
    __syncthreads();
    float row_max = -kHuge;
    for (int w = 0; w < BLOCK / 32; ++w)
        row_max = fmaxf(row_max, shared_max[w]);
    float local_sum = 0.0f;
    for (int i = threadIdx.x; i < cols; i += BLOCK) {
        const float e = __expf(row_cache[i] - row_max);
        row_cache[i] = e;
        local_sum += e;
    }
    const float inv = 1.0f / block_sum<BLOCK>(local_sum);
    for (int i = threadIdx.x; i < cols; i += BLOCK)
        out[i] = row_cache[i] * inv;
}
template __global__ void softmax_rows<256>(const float*, float*, int);

// LayerNorm over the last dimension, one block per row, two passes over registers.
template <int BLOCK, int PER_THREAD>
__global__ void layer_norm(const float* __restrict__ x, const float* __restrict__ gamma,
                           const float* __restrict__ beta, float* __restrict__ y, int cols,
                           float eps) {
    const float* in = x + static_cast<long>(blockIdx.x) * cols;
    float* out = y + static_cast<long>(blockIdx.x) * cols;
    float v[PER_THREAD];
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        const int i = threadIdx.x + j * BLOCK;
        v[j] = i < cols ? in[i] : 0.0f;
        sum += v[j];
    }
    const float mean = block_sum<BLOCK>(sum) / cols;
    float sq = 0.0f;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        const int i = threadIdx.x + j * BLOCK;
        const float d = i < cols ? v[j] - mean : 0.0f;
        sq += d * d;
    }
    const float rstd = rsqrtf(block_sum<BLOCK>(sq) / cols + eps);
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        const int i = threadIdx.x + j * BLOCK;
        if (i < cols)
            out[i] = (v[j] - mean) * rstd * gamma[i] + beta[i];
    }
}
template __global__ void layer_norm<256, 4>(const float*, const float*, const float*, float*, int,
                                            float);

// Transpose through a padded shared tile so both global accesses are coalesced.
constexpr int kTransposeTile = 32;
constexpr int kTransposeRows = 8;

__global__ void transpose(const float* __restrict__ in, float* __restrict__ out, int rows,
                          int cols) {
    __shared__ float tile[kTransposeTile][kTransposeTile + 1];
    int x = blockIdx.x * kTransposeTile + threadIdx.x;
    int y = blockIdx.y * kTransposeTile + threadIdx.y;
    for (int j = 0; j < kTransposeTile; j += kTransposeRows)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * kTransposeTile + threadIdx.x;
    y = blockIdx.x * kTransposeTile + threadIdx.y;
    for (int j = 0; j < kTransposeTile; j += kTransposeRows)
        if (x < rows && y + j < cols)
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

// GELU (tanh form) on float4 vectors, writing half precision.
__device__ __forceinline__ float gelu(float x) {
    const float u = 0.7978845608f * (x + 0.044715f * x * x * x);
    return x / (1.0f + __expf(-2.0f * u));
}

__global__ void gelu_to_half(const float4* __restrict__ x, __half2* __restrict__ y, long n_vec) {
    const long stride = static_cast<long>(gridDim.x) * blockDim.x;
    for (long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_vec;
         i += stride) {
        const float4 v = x[i];
        y[2 * i] = __floats2half2_rn(gelu(v.x), gelu(v.y));
        y[2 * i + 1] = __floats2half2_rn(gelu(v.z), gelu(v.w));
    }
}

// 256-bin histogram: per-block bins in shared memory, merged with global atomics.
__global__ void histogram256(const unsigned char* __restrict__ data, long n,
                             unsigned int* __restrict__ bins) {
    __shared__ unsigned int local[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        local[i] = 0;
    __syncthreads();
    const long stride = static_cast<long>(gridDim.x) * blockDim.x;
    for (long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        if (local[i])
            atomicAdd(&bins[i], local[i]);
}

// Column sums of a row-major matrix: one warp per 32 columns, rows strided over the block.
template <int ROWS_PER_BLOCK>
__global__ void column_sums(const float* __restrict__ x, float* __restrict__ sums, int rows,
                            int cols) {
    __shared__ float partial[ROWS_PER_BLOCK][33];
    const int col = blockIdx.x * 32 + threadIdx.x;
    float acc = 0.0f;
    for (int r = threadIdx.y; r < rows; r += ROWS_PER_BLOCK)
        acc += col < cols ? x[static_cast<long>(r) * cols + col] : 0.0f;
    partial[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < cols) {
        float total = 0.0f;
#pragma unroll
        for (int r = 0; r < ROWS_PER_BLOCK; ++r)
            total += partial[r][threadIdx.x];
        sums[col] = total;
    }
}
template __global__ void column_sums<8>(const float*, float*, int, int);

} // namespace bench
