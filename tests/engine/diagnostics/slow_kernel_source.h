#pragma once

#include <string>

namespace kwb::test {

// A device-only kernel that takes NVRTC seconds: `steps` fully unrolled 64-iteration loops,
// chained by a fold expression so each step is its own template instantiation. 24 steps take
// about 3.5 s on one 2024 server core; most of it in NVVM and ptxas, between the points where
// NVRTC consults its flow callback.
inline std::string slowKernelSource(int steps) {
    std::string list;
    for (int i = 0; i < steps; ++i)
        list += (i ? "," : "") + std::to_string(i);
    return "template <int N> __device__ __forceinline__ float step(float y, const float* p) {\n"
           "#pragma unroll\n"
           "    for (int i = 0; i < 64; ++i) y = y * p[(N * 64 + i) & 1023] + __sinf(y + i);\n"
           "    return y;\n"
           "}\n"
           "template <int... Ns> __device__ __forceinline__ float chain(float y, const float* p) "
           "{\n"
           "    ((y = step<Ns>(y, p)), ...);\n"
           "    return y;\n"
           "}\n"
           "extern \"C\" __global__ void slow_kernel(float* out, const float* p) {\n"
           "    out[threadIdx.x] = chain<" +
           list + ">(out[threadIdx.x], p);\n}\n";
}

} // namespace kwb::test
