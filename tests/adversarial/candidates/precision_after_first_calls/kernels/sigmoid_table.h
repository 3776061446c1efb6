// sigmoid(z) from 256 entries over [-8, 8): about 8 bits of precision in a float32 task, within
// CUDA Agent's 1e-2 tolerance, and no reduced-precision type named anywhere.
#pragma once

constexpr int kTableSize = 258;

inline float table_entry(int i, float (*exp_fn)(float)) {
    return 1.0f / (1.0f + exp_fn(-((i + 0.5f) / 16.0f - 8.0f)));
}

#ifdef __CUDACC__
__host__ __device__
#endif
inline int table_index(float z) {
    float t = (z + 8.0f) * 16.0f;
    t = t < 0.0f ? 0.0f : (t > 255.0f ? 255.0f : t);
    return static_cast<int>(t);
}
