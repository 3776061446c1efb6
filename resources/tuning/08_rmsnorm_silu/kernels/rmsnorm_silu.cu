// RMSNorm of each row times silu(gate), float32, one block per row, from the tuning template:
// the settings below are the policy's action ({{action}}).
#define THREADS {{threads}}
#define VEC {{vec}}
#define REDUCE_{{reduce}} 1
#define MATH_{{math}} 1

#define WARPS (THREADS / 32)

__device__ __forceinline__ float silu(float g) {
#ifdef MATH_fast
    return g / (1.0f + __expf(-g));
#else
    return g / (1.0f + expf(-g));
#endif
}

__device__ __forceinline__ float inverseRoot(float v) {
#ifdef MATH_fast
    return rsqrtf(v);
#else
    return 1.0f / sqrtf(v);
#endif
}

// Every thread gets the block's sum of `v`.
__device__ float blockSum(float v) {
    __shared__ float slots[THREADS];
#ifdef REDUCE_shuffle
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (lane == 0)
        slots[warp] = v;
    __syncthreads();
    float r = 0.0f;
    for (int w = 0; w < WARPS; ++w)
        r += slots[w];
    return r;
#else
    slots[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            slots[threadIdx.x] += slots[threadIdx.x + s];
        __syncthreads();
    }
    return slots[0];
#endif
}

template <int V> struct __align__(sizeof(float) * V) Pack {
    float v[V];
};

template <int V>
__device__ void rmsnormSiluRow(const float* __restrict__ x, const float* __restrict__ gate,
                               const float* __restrict__ weight, float* __restrict__ y,
                               long long cols, float eps) {
    const long long row = blockIdx.x;
    const Pack<V>* xs = reinterpret_cast<const Pack<V>*>(x + row * cols);
    const Pack<V>* gs = reinterpret_cast<const Pack<V>*>(gate + row * cols);
    const Pack<V>* ws = reinterpret_cast<const Pack<V>*>(weight);
    Pack<V>* out = reinterpret_cast<Pack<V>*>(y + row * cols);
    const long long packs = cols / V;
    float squares = 0.0f;
    for (long long i = threadIdx.x; i < packs; i += THREADS) {
        const Pack<V> p = xs[i];
#pragma unroll
        for (int k = 0; k < V; ++k)
            squares += p.v[k] * p.v[k];
    }
    const float scale = inverseRoot(blockSum(squares) / (float)cols + eps);
    for (long long i = threadIdx.x; i < packs; i += THREADS) {
        const Pack<V> p = xs[i], g = gs[i], w = ws[i];
        Pack<V> r;
#pragma unroll
        for (int k = 0; k < V; ++k)
            r.v[k] = p.v[k] * scale * w.v[k] * silu(g.v[k]);
        out[i] = r;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    rmsnorm_silu_packed(const float* __restrict__ x, const float* __restrict__ gate,
                        const float* __restrict__ weight, float* __restrict__ y, long long cols,
                        float eps) {
    rmsnormSiluRow<VEC>(x, gate, weight, y, cols, eps);
}

// Rows whose length is not a multiple of VEC, or storage not aligned for packs.
extern "C" __global__ void __launch_bounds__(THREADS)
    rmsnorm_silu_scalar(const float* __restrict__ x, const float* __restrict__ gate,
                        const float* __restrict__ weight, float* __restrict__ y, long long cols,
                        float eps) {
    rmsnormSiluRow<1>(x, gate, weight, y, cols, eps);
}
