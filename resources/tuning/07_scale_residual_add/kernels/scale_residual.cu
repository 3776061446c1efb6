// sigmoid(x * scale + y), float32, scale broadcast along the last dimension, from the tuning
// template: the settings below are the policy's action ({{action}}).
#define THREADS {{threads}}
#define VEC {{vec}}
#define UNROLL {{unroll}}
#define MATH_{{math}} 1

// VEC floats moved as one aligned access (VEC 4: a 128-bit load or store).
struct __align__(sizeof(float) * VEC) Pack {
    float v[VEC];
};

__device__ __forceinline__ float sigmoid(float z) {
#ifdef MATH_fast
    return 1.0f / (1.0f + __expf(-z));
#else
    return 1.0f / (1.0f + expf(-z));
#endif
}

// Packs never straddle rows: the caller uses packs only when the row length is a multiple of
// VEC, so a pack's scale values are consecutive too.
extern "C" __global__ void __launch_bounds__(THREADS)
    scale_residual_packed(const Pack* __restrict__ x, const Pack* __restrict__ y,
                          const Pack* __restrict__ scale, Pack* __restrict__ out, long long packs,
                          long long row_packs) {
    const long long step = (long long)gridDim.x * THREADS * UNROLL;
    for (long long base = (long long)blockIdx.x * THREADS * UNROLL + threadIdx.x; base < packs;
         base += step) {
        Pack a[UNROLL], b[UNROLL], s[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long i = base + (long long)u * THREADS;
            if (i < packs) {
                a[u] = x[i];
                b[u] = y[i];
                s[u] = scale[i % row_packs];
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long i = base + (long long)u * THREADS;
            if (i < packs) {
                Pack r;
#pragma unroll
                for (int k = 0; k < VEC; ++k)
                    r.v[k] = sigmoid(a[u].v[k] * s[u].v[k] + b[u].v[k]);
                out[i] = r;
            }
        }
    }
}

extern "C" __global__ void scale_residual_scalar(const float* __restrict__ x,
                                                 const float* __restrict__ y,
                                                 const float* __restrict__ scale,
                                                 float* __restrict__ out, long long n,
                                                 long long dim) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        out[i] = sigmoid(x[i] * scale[i % dim] + y[i]);
}
