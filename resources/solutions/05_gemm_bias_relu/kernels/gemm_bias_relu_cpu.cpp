// Host implementation of gemm_bias_relu_launch so the solution can be validated without
// a GPU.

#ifdef KWB_CPU_MODE

#include <cstdint>

extern "C" void gemm_bias_relu_launch(const float* a, const float* w, const float* bias, float* out,
                                      int64_t M, int64_t N, int64_t K, void* /*stream*/) {
    // Both operands are contiguous along K, so each output is a dot product of two rows.
    // Eight independent partial sums break the add dependency chain and let the compiler
    // vectorize without -ffast-math; otherwise the reference-size GEMM takes many seconds.
    constexpr int64_t kLanes = 8;
    for (int64_t m = 0; m < M; ++m) {
        const float* a_row = a + m * K;
        for (int64_t n = 0; n < N; ++n) {
            const float* w_row = w + n * K;
            float partial[kLanes] = {};
            int64_t k = 0;
            for (; k + kLanes <= K; k += kLanes) {
                for (int64_t l = 0; l < kLanes; ++l) {
                    partial[l] += a_row[k + l] * w_row[k + l];
                }
            }
            float sum = 0.0f;
            for (int64_t l = 0; l < kLanes; ++l) {
                sum += partial[l];
            }
            for (; k < K; ++k) {
                sum += a_row[k] * w_row[k];
            }
            const float v = sum + bias[n];
            out[m * N + n] = v > 0.0f ? v : 0.0f;
        }
    }
}

#endif // KWB_CPU_MODE
