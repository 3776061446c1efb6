// Host implementation of softmax_launch so the solution can be validated without a GPU.

#ifdef KWB_CPU_MODE

#include <cmath>
#include <cstdint>
#include <limits>

extern "C" void softmax_launch(const float* x, float* y, int64_t rows, int64_t cols,
                               void* /*stream*/) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        float row_max = -std::numeric_limits<float>::infinity();
        for (int64_t c = 0; c < cols; ++c) {
            row_max = std::fmax(row_max, xr[c]);
        }
        // Accumulate in double: the CPU path is a correctness reference, not a fast path.
        double sum = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            const float e = std::exp(xr[c] - row_max);
            yr[c] = e;
            sum += e;
        }
        const float inv_sum = static_cast<float>(1.0 / sum);
        for (int64_t c = 0; c < cols; ++c) {
            yr[c] *= inv_sum;
        }
    }
}

#endif // KWB_CPU_MODE
