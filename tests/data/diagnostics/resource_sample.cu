// Kernels with known resource usage; the ptxas -v logs in this folder were captured from it.
__constant__ float coeffs[16];

// 256 floats of static shared memory (1024 bytes) and a launch bound of 128 threads.
__global__ void __launch_bounds__(128) tile_kernel(float* out, const float* in) {
    __shared__ float tile[256];
    tile[threadIdx.x] = in[threadIdx.x] * coeffs[threadIdx.x & 15];
    __syncthreads();
    out[threadIdx.x] = tile[255 - threadIdx.x];
}

// A dynamically indexed local array cannot live in registers: 256 bytes of stack frame.
__global__ void stack_kernel(float* out, int k) {
    float local[64];
#pragma unroll 1
    for (int i = 0; i < 64; ++i)
        local[i] = out[i * k];
    out[threadIdx.x] = local[(threadIdx.x * k) & 63];
}

extern __shared__ float dynamic_smem[];

template <int N> __global__ void dynamic_kernel(float* out) {
    dynamic_smem[threadIdx.x] = N;
    __syncthreads();
    out[threadIdx.x] = dynamic_smem[(threadIdx.x + 1) % blockDim.x];
}
template __global__ void dynamic_kernel<4>(float*);

__device__ __noinline__ float gather(const float* p, int k) {
    float a[32];
    for (int i = 0; i < 32; ++i)
        a[i] = p[i * k];
    return a[k & 31];
}

extern "C" __global__ void calls_gather(float* p, int k) {
    p[threadIdx.x] = gather(p, k);
}
