// Softmax over the rows of a float32 matrix, one block per row, from the tuning template: the
// settings below are the policy's action ({{action}}).
#define THREADS {{threads}}
#define VEC {{vec}}
#define REDUCE_{{reduce}} 1
#define PASSES_{{passes}} 1
#define MATH_{{math}} 1

#define WARPS (THREADS / 32)
// NVRTC has no math.h: minus infinity by its bits.
#define MINUS_INFINITY (__int_as_float(0xff800000))

__device__ __forceinline__ float exponential(float x) {
#ifdef MATH_fast
    return __expf(x);
#else
    return expf(x);
#endif
}

// A running (max, sum of exp(x - max)) pair, and how two of them combine.
struct MaxSum {
    float max, sum;
};
struct Combine {
    __device__ __forceinline__ MaxSum operator()(MaxSum a, MaxSum b) const {
        const float m = fmaxf(a.max, b.max);
        if (m == MINUS_INFINITY)
            return {m, 0.0f};
        return {m, a.sum * exponential(a.max - m) + b.sum * exponential(b.max - m)};
    }
};
struct Max {
    __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

// Every thread gets the block's reduction of `v` by `op`.
template <typename T, typename Op> __device__ T blockReduce(T v, Op op) {
    __shared__ T slots[THREADS];
#ifdef REDUCE_shuffle
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        T other;
        if constexpr (sizeof(T) == sizeof(float)) {
            other = __shfl_xor_sync(0xffffffffu, v, offset);
        } else {
            other.max = __shfl_xor_sync(0xffffffffu, v.max, offset);
            other.sum = __shfl_xor_sync(0xffffffffu, v.sum, offset);
        }
        v = op(v, other);
    }
    if (lane == 0)
        slots[warp] = v;
    __syncthreads();
    T r = slots[0];
    for (int w = 1; w < WARPS; ++w)
        r = op(r, slots[w]);
    __syncthreads(); // the slots are reused by the next reduction
    return r;
#else
    slots[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            slots[threadIdx.x] = op(slots[threadIdx.x], slots[threadIdx.x + s]);
        __syncthreads();
    }
    const T r = slots[0];
    __syncthreads();
    return r;
#endif
}

template <int V> struct __align__(sizeof(float) * V) Pack {
    float v[V];
};

template <int V> __device__ void softmaxRow(const float* __restrict__ x, float* __restrict__ y,
                                            long long cols) {
    const long long row = blockIdx.x;
    const Pack<V>* in = reinterpret_cast<const Pack<V>*>(x + row * cols);
    Pack<V>* out = reinterpret_cast<Pack<V>*>(y + row * cols);
    const long long packs = cols / V;
#ifdef PASSES_online
    MaxSum local{MINUS_INFINITY, 0.0f};
    for (long long i = threadIdx.x; i < packs; i += THREADS) {
        const Pack<V> p = in[i];
#pragma unroll
        for (int k = 0; k < V; ++k)
            local = Combine()(local, MaxSum{p.v[k], 1.0f});
    }
    const MaxSum total = blockReduce(local, Combine());
    const float rowMax = total.max, rowSum = total.sum;
#else
    float localMax = MINUS_INFINITY;
    for (long long i = threadIdx.x; i < packs; i += THREADS) {
        const Pack<V> p = in[i];
#pragma unroll
        for (int k = 0; k < V; ++k)
            localMax = fmaxf(localMax, p.v[k]);
    }
    const float rowMax = blockReduce(localMax, Max());
    float localSum = 0.0f;
    for (long long i = threadIdx.x; i < packs; i += THREADS) {
        const Pack<V> p = in[i];
#pragma unroll
        for (int k = 0; k < V; ++k)
            localSum += exponential(p.v[k] - rowMax);
    }
    const float rowSum = blockReduce(localSum, Sum());
#endif
    const float inverse = 1.0f / rowSum;
    for (long long i = threadIdx.x; i < packs; i += THREADS) {
        Pack<V> p = in[i];
#pragma unroll
        for (int k = 0; k < V; ++k)
            p.v[k] = exponential(p.v[k] - rowMax) * inverse;
        out[i] = p;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    softmax_packed(const float* __restrict__ x, float* __restrict__ y, long long cols) {
    softmaxRow<VEC>(x, y, cols);
}

// Rows whose length is not a multiple of VEC, or storage not aligned for packs.
extern "C" __global__ void __launch_bounds__(THREADS)
    softmax_scalar(const float* __restrict__ x, float* __restrict__ y, long long cols) {
    softmaxRow<1>(x, y, cols);
}
