// sigmoid(x * scale + y) in one pass, scale broadcast along the last dimension. Device code
// only (NVRTC); model_new.py launches it through kwb_kernels.

extern "C" __global__ void scale_residual_sigmoid(const float* __restrict__ x,
                                                  const float* __restrict__ y,
                                                  const float* __restrict__ scale,
                                                  float* __restrict__ out, long long n, int dim) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = x[i] * scale[i % dim] + y[i];
        out[i] = 1.0f / (1.0f + __expf(-v));
    }
}
