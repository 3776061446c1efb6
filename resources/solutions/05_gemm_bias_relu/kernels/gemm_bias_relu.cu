// out[M, N] = relu(A[M, K] * W[N, K]^T + bias[N]), float32, row-major.
//
// W is stored the way nn.Linear keeps it (one row per output feature), so both operands
// are contiguous along K. Each 256-thread block computes a 128x128 output tile, stepping
// through K in slices of 8 that are staged (double-buffered) in shared memory transposed to
// [k][m] / [k][n]: that way the inner product loop reads consecutive m / n values with
// 128-bit loads.
// Every thread owns an 8x8 sub-tile held in registers, split into two 4-wide halves 64
// apart so that the eight threads of one shared-memory phase hit distinct banks. Bias and
// ReLU are applied on the registers before the only store of the result.

#include <cstdint>
#include <cuda_runtime.h>

namespace {

constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kTileK = 8;
constexpr int kThreads = 256;
constexpr int kThreadTile = 8; // per-thread outputs along M and along N
constexpr int kHalf = kTileM / 2;

static_assert(kTileM == kTileN, "loader and epilogue share one row mapping for A and W");
static_assert(kTileM * kTileK == kThreads * 4, "each thread loads 4 A values per K slice");
static_assert(kTileN * kTileK == kThreads * 4, "each thread loads 4 W values per K slice");
static_assert((kTileM / kThreadTile) * (kTileN / kThreadTile) == kThreads, "thread grid");

// Loads 4 consecutive K values of one operand row, zero-filling past the matrix edges so
// the compute loop needs no bounds checks. kVec4 requires K % 4 == 0 and a 16-byte
// aligned base pointer; then a group of 4 is either wholly inside or wholly outside.
template <bool kVec4>
__device__ __forceinline__ float4 load_k4(const float* __restrict__ src, int64_t row, int64_t rows,
                                          int64_t k, int64_t K) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row >= rows) {
        return v;
    }
    const float* p = src + row * K + k;
    if constexpr (kVec4) {
        if (k < K) {
            v = *reinterpret_cast<const float4*>(p);
        }
    } else {
        const float* end = src + row * K + K;
        v.x = p < end ? p[0] : 0.0f;
        v.y = p + 1 < end ? p[1] : 0.0f;
        v.z = p + 2 < end ? p[2] : 0.0f;
        v.w = p + 3 < end ? p[3] : 0.0f;
    }
    return v;
}

template <bool kVec4>
__global__ void __launch_bounds__(kThreads)
    gemm_bias_relu_kernel(const float* __restrict__ a, const float* __restrict__ w,
                          const float* __restrict__ bias, float* __restrict__ out, int64_t M,
                          int64_t N, int64_t K) {
    // Two buffers per operand: while the block computes on one K slice, the next slice's
    // global loads are already in flight (held in registers) and land in the other buffer,
    // so global latency overlaps the FMAs and one barrier per slice suffices.
    __shared__ __align__(16) float a_tile[2][kTileK][kTileM];
    __shared__ __align__(16) float w_tile[2][kTileK][kTileN];

    const int tid = threadIdx.x;
    const int64_t m0 = static_cast<int64_t>(blockIdx.x) * kTileM;
    const int64_t n0 = static_cast<int64_t>(blockIdx.y) * kTileN;

    // Loader mapping: two threads per operand row, each fetching 4 consecutive K values;
    // adjacent threads read adjacent 16-byte chunks, so every 32-byte sector is used fully.
    const int load_row = tid / 2;
    const int load_k = (tid % 2) * 4;

    // Compute mapping: a 16x16 grid of threads, each owning rows {ty*4 + i, 64 + ty*4 + i}
    // and columns {tx*4 + j, 64 + tx*4 + j}.
    const int tx = tid % 16;
    const int ty = tid / 16;

    float acc[kThreadTile][kThreadTile];
#pragma unroll
    for (int i = 0; i < kThreadTile; ++i) {
#pragma unroll
        for (int j = 0; j < kThreadTile; ++j) {
            acc[i][j] = 0.0f;
        }
    }

    // Stores the transposed 4-value fragments; the stores are 2-way bank conflicted, which
    // is cheap next to the 64 FMAs each thread issues per K step.
    auto stage = [&](int buf, const float4& av, const float4& wv) {
        a_tile[buf][load_k + 0][load_row] = av.x;
        a_tile[buf][load_k + 1][load_row] = av.y;
        a_tile[buf][load_k + 2][load_row] = av.z;
        a_tile[buf][load_k + 3][load_row] = av.w;
        w_tile[buf][load_k + 0][load_row] = wv.x;
        w_tile[buf][load_k + 1][load_row] = wv.y;
        w_tile[buf][load_k + 2][load_row] = wv.z;
        w_tile[buf][load_k + 3][load_row] = wv.w;
    };

    float4 a_next = load_k4<kVec4>(a, m0 + load_row, M, load_k, K);
    float4 w_next = load_k4<kVec4>(w, n0 + load_row, N, load_k, K);
    stage(0, a_next, w_next);
    __syncthreads();

    int buf = 0;
    for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
        const bool has_next = k0 + kTileK < K;
        if (has_next) {
            a_next = load_k4<kVec4>(a, m0 + load_row, M, k0 + kTileK + load_k, K);
            w_next = load_k4<kVec4>(w, n0 + load_row, N, k0 + kTileK + load_k, K);
        }

#pragma unroll
        for (int kk = 0; kk < kTileK; ++kk) {
            const float* a_k = a_tile[buf][kk];
            const float* w_k = w_tile[buf][kk];
            const float4 a_lo = *reinterpret_cast<const float4*>(a_k + ty * 4);
            const float4 a_hi = *reinterpret_cast<const float4*>(a_k + kHalf + ty * 4);
            const float4 w_lo = *reinterpret_cast<const float4*>(w_k + tx * 4);
            const float4 w_hi = *reinterpret_cast<const float4*>(w_k + kHalf + tx * 4);
            const float a_frag[kThreadTile] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w,
                                               a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float w_frag[kThreadTile] = {w_lo.x, w_lo.y, w_lo.z, w_lo.w,
                                               w_hi.x, w_hi.y, w_hi.z, w_hi.w};
#pragma unroll
            for (int i = 0; i < kThreadTile; ++i) {
#pragma unroll
                for (int j = 0; j < kThreadTile; ++j) {
                    acc[i][j] = fmaf(a_frag[i], w_frag[j], acc[i][j]);
                }
            }
        }

        // The other buffer was last read in the previous iteration, which every thread
        // finished before that iteration's barrier, so it can be overwritten now.
        if (has_next) {
            stage(buf ^ 1, a_next, w_next);
        }
        __syncthreads();
        buf ^= 1;
    }

    const bool vec_store = kVec4 && N % 4 == 0;
#pragma unroll
    for (int i = 0; i < kThreadTile; ++i) {
        const int64_t m = m0 + (i < 4 ? ty * 4 + i : kHalf + ty * 4 + (i - 4));
        if (m >= M) {
            continue;
        }
        float* out_row = out + m * N;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int64_t n = n0 + half * kHalf + tx * 4;
            float r[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float b = n + j < N ? bias[n + j] : 0.0f;
                r[j] = fmaxf(acc[i][half * 4 + j] + b, 0.0f);
            }
            if (vec_store && n + 3 < N) {
                *reinterpret_cast<float4*>(out_row + n) = make_float4(r[0], r[1], r[2], r[3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    if (n + j < N) {
                        out_row[n + j] = r[j];
                    }
                }
            }
        }
    }
}

bool is_aligned16(const void* p) {
    return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

} // namespace

extern "C" void gemm_bias_relu_launch(const float* a, const float* w, const float* bias, float* out,
                                      int64_t M, int64_t N, int64_t K, cudaStream_t stream) {
    if (M <= 0 || N <= 0) {
        return;
    }
    // K == 0 still launches: the loop is skipped and the epilogue writes relu(bias).
    // M tiles go on grid.x (limit 2^31 - 1); N tiles on grid.y allow N up to ~8.4M.
    const dim3 grid(static_cast<unsigned>((M + kTileM - 1) / kTileM),
                    static_cast<unsigned>((N + kTileN - 1) / kTileN));
    // float4 loads/stores additionally need out aligned, since the store path shares kVec4.
    const bool vec4 = K % 4 == 0 && is_aligned16(a) && is_aligned16(w) && is_aligned16(out);
    if (vec4) {
        gemm_bias_relu_kernel<true><<<grid, kThreads, 0, stream>>>(a, w, bias, out, M, N, K);
    } else {
        gemm_bias_relu_kernel<false><<<grid, kThreads, 0, stream>>>(a, w, bias, out, M, N, K);
    }
}
