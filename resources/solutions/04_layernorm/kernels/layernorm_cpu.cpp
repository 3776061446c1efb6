// Host implementation of layernorm_launch so the solution can be validated without a GPU.

#ifdef KWB_CPU_MODE

#include <cmath>
#include <cstdint>

extern "C" void layernorm_launch(const float* x, const float* weight, const float* bias, float* y,
                                 int64_t rows, int64_t hidden, float eps, void* /*stream*/) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * hidden;
        float* yr = y + r * hidden;
        // Double accumulators: the CPU path is a correctness reference, not a fast path.
        double sum = 0.0;
        for (int64_t c = 0; c < hidden; ++c) {
            sum += xr[c];
        }
        const double mean = sum / static_cast<double>(hidden);
        double sq = 0.0;
        for (int64_t c = 0; c < hidden; ++c) {
            const double d = xr[c] - mean;
            sq += d * d;
        }
        const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(hidden) + eps);
        for (int64_t c = 0; c < hidden; ++c) {
            yr[c] = static_cast<float>((xr[c] - mean) * rstd) * weight[c] + bias[c];
        }
    }
}

#endif // KWB_CPU_MODE
