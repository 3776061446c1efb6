// Host implementation of rmsnorm_silu_launch so the solution can be validated without a
// GPU.

#ifdef KWB_CPU_MODE

#include <cmath>
#include <cstdint>

extern "C" void rmsnorm_silu_launch(const float* x, const float* gate, const float* weight,
                                    float* out, int64_t rows, int64_t hidden, float eps,
                                    void* /*stream*/) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * hidden;
        const float* gr = gate + r * hidden;
        float* outr = out + r * hidden;
        // Double accumulator: the CPU path is a correctness reference, not a fast path.
        double sq = 0.0;
        for (int64_t c = 0; c < hidden; ++c) {
            sq += static_cast<double>(xr[c]) * xr[c];
        }
        const float rstd =
            static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(hidden) + eps));
        for (int64_t c = 0; c < hidden; ++c) {
            const float g = gr[c];
            const float silu = g / (1.0f + std::exp(-g));
            outr[c] = xr[c] * rstd * weight[c] * silu;
        }
    }
}

#endif // KWB_CPU_MODE
