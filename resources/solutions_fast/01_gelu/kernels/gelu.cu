// GELU (tanh approximation), float32, device code only: compiled by NVRTC and launched from
// model_new.py through kwb_kernels.

// 0.5 * x * (1 + tanh(u)) equals x * sigmoid(2u); the sigmoid form needs one exp and
// saturates to 0 or x for large |x| instead of producing inf / inf.
__device__ __forceinline__ float gelu_tanh(float x) {
    const float kSqrt2OverPi = 0.7978845608028654f;
    const float kCubic = 0.044715f;
    const float u = kSqrt2OverPi * (x + kCubic * x * x * x);
    return x / (1.0f + __expf(-2.0f * u));
}

// 128-bit loads and stores: one float4 per thread per step of a grid-stride loop.
extern "C" __global__ void gelu_vec4(const float4* __restrict__ x, float4* __restrict__ y,
                                     long long n_vec) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += stride) {
        float4 v = x[i];
        v.x = gelu_tanh(v.x);
        v.y = gelu_tanh(v.y);
        v.z = gelu_tanh(v.z);
        v.w = gelu_tanh(v.w);
        y[i] = v;
    }
}

// The tail (and tensors whose storage is not 16-byte aligned).
extern "C" __global__ void gelu_scalar(const float* __restrict__ x, float* __restrict__ y,
                                       long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = gelu_tanh(x[i]);
}
