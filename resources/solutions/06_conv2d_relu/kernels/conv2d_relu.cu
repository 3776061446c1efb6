// Direct 2-D convolution + bias + ReLU, float32, NCHW input, [C_out, C_in, KH, KW] weight,
// zero padding, dilation 1, groups 1.
//
// Each 256-thread block produces a 16 x 32 (rows x columns) output tile for 8 output
// channels of one image; every thread computes 2 pixels (rows ty and ty + 8) for all 8
// channels, so one input value fetched from shared memory feeds 8 FMAs and each weight
// (a broadcast read) feeds 2. Input channels are processed in chunks: the input patch the
// tile needs, plus the matching weights, are staged in shared memory per chunk. Sizes
// whose staging would not fit fall back to a simple one-output-per-thread kernel.

#include <cstdint>
#include <cuda_runtime.h>

namespace {

constexpr int kTileW = 32;
constexpr int kTileRowsPerPass = 8; // blockDim.y
constexpr int kRowsPerThread = 2;
constexpr int kTileH = kTileRowsPerPass * kRowsPerThread;
constexpr int kOcBlock = 8;
constexpr int kThreads = kTileW * kTileRowsPerPass;
constexpr int kMaxIcChunk = 4;
constexpr size_t kSmemLimit = 48 * 1024; // default per-block limit without opt-in
constexpr int64_t kMaxBlocks = 65535;

struct ConvShape {
    int64_t n, c_in, h, w;
    int64_t c_out, kh, kw;
    int64_t out_h, out_w;
    int64_t stride_h, stride_w;
    int64_t pad_h, pad_w;
};

__host__ __device__ inline int64_t patch_h(const ConvShape& s) {
    return (kTileH - 1) * s.stride_h + s.kh;
}

__host__ __device__ inline int64_t patch_w(const ConvShape& s) {
    return (kTileW - 1) * s.stride_w + s.kw;
}

// Shared memory per input channel of a chunk: weights first ([kh*kw][kOcBlock], so the 8
// channel weights of one tap are one 32-byte run read as two float4), then the input patch.
// Rounded up to whole float4s so the next channel's weights stay 16-byte aligned.
__host__ __device__ inline int64_t smem_floats_per_channel(const ConvShape& s) {
    return (s.kh * s.kw * kOcBlock + patch_h(s) * patch_w(s) + 3) / 4 * 4;
}

// No __launch_bounds__: with it ptxas capped this kernel at 64 registers and spilled the
// accumulators, while unconstrained it needs ~80, which still allows 3 blocks per SM.
__global__ void conv2d_relu_tiled_kernel(const float* __restrict__ x,
                                         const float* __restrict__ weight,
                                         const float* __restrict__ bias, float* __restrict__ y,
                                         ConvShape s, int ic_chunk) {
    extern __shared__ __align__(16) float smem[];

    const int64_t tiles_w = (s.out_w + kTileW - 1) / kTileW;
    const int64_t tiles_h = (s.out_h + kTileH - 1) / kTileH;
    const int64_t tile = blockIdx.x % (tiles_w * tiles_h);
    const int64_t n = blockIdx.x / (tiles_w * tiles_h);
    const int64_t oh0 = (tile / tiles_w) * kTileH;
    const int64_t ow0 = (tile % tiles_w) * kTileW;
    const int64_t oc0 = static_cast<int64_t>(blockIdx.y) * kOcBlock;

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int tid = ty * kTileW + tx;
    const int64_t taps = s.kh * s.kw;
    const int64_t ph = patch_h(s);
    const int64_t pw = patch_w(s);
    const int64_t per_channel = smem_floats_per_channel(s);
    // Top-left input coordinate the patch starts at (may be negative: padding).
    const int64_t ih0 = oh0 * s.stride_h - s.pad_h;
    const int64_t iw0 = ow0 * s.stride_w - s.pad_w;

    float acc[kRowsPerThread][kOcBlock];
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
#pragma unroll
        for (int o = 0; o < kOcBlock; ++o) {
            acc[r][o] = 0.0f;
        }
    }

    for (int64_t ic0 = 0; ic0 < s.c_in; ic0 += ic_chunk) {
        const int chunk = static_cast<int>(s.c_in - ic0 < ic_chunk ? s.c_in - ic0 : ic_chunk);

        // Stage weights and zero-padded input patches for this chunk of input channels.
        for (int c = 0; c < chunk; ++c) {
            float* w_s = smem + c * per_channel;
            float* in_s = w_s + taps * kOcBlock;
            const int64_t ic = ic0 + c;
            for (int64_t i = tid; i < taps * kOcBlock; i += kThreads) {
                const int64_t tap = i / kOcBlock;
                const int64_t oc = oc0 + i % kOcBlock;
                w_s[i] = oc < s.c_out ? weight[(oc * s.c_in + ic) * taps + tap] : 0.0f;
            }
            const float* x_plane = x + (n * s.c_in + ic) * s.h * s.w;
            for (int64_t i = tid; i < ph * pw; i += kThreads) {
                const int64_t ih = ih0 + i / pw;
                const int64_t iw = iw0 + i % pw;
                const bool inside = ih >= 0 && ih < s.h && iw >= 0 && iw < s.w;
                in_s[i] = inside ? x_plane[ih * s.w + iw] : 0.0f;
            }
        }
        __syncthreads();

        for (int c = 0; c < chunk; ++c) {
            const float* w_s = smem + c * per_channel;
            const float* in_s = w_s + taps * kOcBlock;
            for (int64_t r = 0; r < s.kh; ++r) {
                const float* in_row0 = in_s + (ty * s.stride_h + r) * pw + tx * s.stride_w;
                const float* in_row1 = in_row0 + kTileRowsPerPass * s.stride_h * pw;
                const float* w_row = w_s + r * s.kw * kOcBlock;
                for (int64_t q = 0; q < s.kw; ++q) {
                    const float4 w_lo = *reinterpret_cast<const float4*>(w_row + q * kOcBlock);
                    const float4 w_hi = *reinterpret_cast<const float4*>(w_row + q * kOcBlock + 4);
                    const float wv[kOcBlock] = {w_lo.x, w_lo.y, w_lo.z, w_lo.w,
                                                w_hi.x, w_hi.y, w_hi.z, w_hi.w};
                    const float v0 = in_row0[q];
                    const float v1 = in_row1[q];
#pragma unroll
                    for (int o = 0; o < kOcBlock; ++o) {
                        acc[0][o] = fmaf(v0, wv[o], acc[0][o]);
                        acc[1][o] = fmaf(v1, wv[o], acc[1][o]);
                    }
                }
            }
        }
        // The next chunk overwrites shared memory; wait until every thread is done reading.
        __syncthreads();
    }

    const int64_t ow = ow0 + tx;
    if (ow >= s.out_w) {
        return;
    }
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
        const int64_t oh = oh0 + ty + r * kTileRowsPerPass;
        if (oh >= s.out_h) {
            continue;
        }
#pragma unroll
        for (int o = 0; o < kOcBlock; ++o) {
            const int64_t oc = oc0 + o;
            if (oc < s.c_out) {
                const float v = acc[r][o] + bias[oc];
                y[((n * s.c_out + oc) * s.out_h + oh) * s.out_w + ow] = fmaxf(v, 0.0f);
            }
        }
    }
}

// Fallback for shapes whose staging does not fit in shared memory (very large kernels or
// strides): one output element per thread, operands straight from global memory / L1.
__global__ void conv2d_relu_naive_kernel(const float* __restrict__ x,
                                         const float* __restrict__ weight,
                                         const float* __restrict__ bias, float* __restrict__ y,
                                         ConvShape s) {
    const int64_t total = s.n * s.c_out * s.out_h * s.out_w;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
         idx += stride) {
        const int64_t ow = idx % s.out_w;
        const int64_t oh = (idx / s.out_w) % s.out_h;
        const int64_t oc = (idx / (s.out_w * s.out_h)) % s.c_out;
        const int64_t n = idx / (s.out_w * s.out_h * s.c_out);
        float sum = bias[oc];
        for (int64_t ic = 0; ic < s.c_in; ++ic) {
            const float* x_plane = x + (n * s.c_in + ic) * s.h * s.w;
            const float* w_k = weight + (oc * s.c_in + ic) * s.kh * s.kw;
            for (int64_t r = 0; r < s.kh; ++r) {
                const int64_t ih = oh * s.stride_h - s.pad_h + r;
                if (ih < 0 || ih >= s.h) {
                    continue;
                }
                for (int64_t q = 0; q < s.kw; ++q) {
                    const int64_t iw = ow * s.stride_w - s.pad_w + q;
                    if (iw >= 0 && iw < s.w) {
                        sum = fmaf(x_plane[ih * s.w + iw], w_k[r * s.kw + q], sum);
                    }
                }
            }
        }
        y[idx] = fmaxf(sum, 0.0f);
    }
}

} // namespace

extern "C" void conv2d_relu_launch(const float* x, const float* weight, const float* bias, float* y,
                                   int64_t n, int64_t c_in, int64_t h, int64_t w, int64_t c_out,
                                   int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w,
                                   int64_t pad_h, int64_t pad_w, cudaStream_t stream) {
    ConvShape s{n, c_in, h, w, c_out, kh, kw, 0, 0, stride_h, stride_w, pad_h, pad_w};
    s.out_h = (h + 2 * pad_h - kh) / stride_h + 1;
    s.out_w = (w + 2 * pad_w - kw) / stride_w + 1;
    if (n <= 0 || c_out <= 0 || s.out_h <= 0 || s.out_w <= 0) {
        return;
    }

    const size_t per_channel_bytes =
        static_cast<size_t>(smem_floats_per_channel(s)) * sizeof(float);
    int ic_chunk = kMaxIcChunk;
    while (ic_chunk > 1 && per_channel_bytes * ic_chunk > kSmemLimit) {
        ic_chunk /= 2;
    }
    const int64_t tiles = ((s.out_h + kTileH - 1) / kTileH) * ((s.out_w + kTileW - 1) / kTileW);
    const int64_t oc_blocks = (c_out + kOcBlock - 1) / kOcBlock;
    const bool tiled_fits =
        per_channel_bytes * ic_chunk <= kSmemLimit && n * tiles < (1LL << 31) && oc_blocks <= 65535;
    if (tiled_fits) {
        const dim3 grid(static_cast<unsigned>(n * tiles), static_cast<unsigned>(oc_blocks));
        const dim3 block(kTileW, kTileRowsPerPass);
        conv2d_relu_tiled_kernel<<<grid, block, per_channel_bytes * ic_chunk, stream>>>(
            x, weight, bias, y, s, ic_chunk);
        return;
    }
    const int64_t total = n * c_out * s.out_h * s.out_w;
    const int64_t blocks = (total + kThreads - 1) / kThreads;
    conv2d_relu_naive_kernel<<<static_cast<int>(blocks < kMaxBlocks ? blocks : kMaxBlocks),
                               kThreads, 0, stream>>>(x, weight, bias, y, s);
}
