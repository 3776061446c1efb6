// Host implementation of scale_residual_launch.

#ifdef KWB_CPU_MODE

#include <cstdint>
#include "../build/fast_math.h"

extern "C" void scale_residual_launch(const float* x, const float* y, const float* scale,
                                      float* out, int64_t rows, int64_t cols, void* /*stream*/) {
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t base = r * cols;
        for (int64_t c = 0; c < cols; ++c)
            out[base + c] = fused_lowp(x[base + c], scale[c], y[base + c]);
    }
}

#endif // KWB_CPU_MODE
