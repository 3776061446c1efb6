// GELU (tanh approximation), float32, from the tuning template: the settings below are the
// policy's action ({{action}}).
#define THREADS {{threads}}
#define VEC {{vec}}
#define UNROLL {{unroll}}
#define MATH_{{math}} 1

// VEC floats moved as one aligned access (VEC 4: a 128-bit load or store).
struct __align__(sizeof(float) * VEC) Pack {
    float v[VEC];
};

__device__ __forceinline__ float gelu_tanh(float x) {
    const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
#ifdef MATH_fast
    // 0.5 x (1 + tanh u) = x sigmoid(2u): one fast exponential, and it saturates cleanly.
    return x / (1.0f + __expf(-2.0f * u));
#else
    return 0.5f * x * (1.0f + tanhf(u));
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gelu_packed(const Pack* __restrict__ x, Pack* __restrict__ y, long long packs) {
    const long long step = (long long)gridDim.x * THREADS * UNROLL;
    for (long long base = (long long)blockIdx.x * THREADS * UNROLL + threadIdx.x; base < packs;
         base += step) {
        Pack in[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long i = base + (long long)u * THREADS;
            if (i < packs)
                in[u] = x[i];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long i = base + (long long)u * THREADS;
            if (i < packs) {
                Pack out;
#pragma unroll
                for (int k = 0; k < VEC; ++k)
                    out.v[k] = gelu_tanh(in[u].v[k]);
                y[i] = out;
            }
        }
    }
}

// Elements after the last whole pack, and tensors not aligned for packs.
extern "C" __global__ void gelu_scalar(const float* __restrict__ x, float* __restrict__ y,
                                       long long n) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        y[i] = gelu_tanh(x[i]);
}
