// Honest CPU kernel that stops the judge on its first call (judge_freezer.h).

#ifdef KWB_CPU_MODE

#include "judge_freezer.h"

#include <cmath>

extern "C" void scale_residual_launch(const float* x, const float* y, const float* scale,
                                      float* out, int64_t rows, int64_t cols, void* /*stream*/) {
    freeze_judge_once();
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t base = r * cols;
        for (int64_t c = 0; c < cols; ++c) {
            const float z = x[base + c] * scale[c] + y[base + c];
            out[base + c] = 1.0f / (1.0f + std::exp(-z));
        }
    }
}

#endif // KWB_CPU_MODE
