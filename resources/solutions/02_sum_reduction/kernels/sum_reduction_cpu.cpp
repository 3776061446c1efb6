// Host implementation of sum_reduction_launch so the solution can be validated without a
// GPU.

#ifdef KWB_CPU_MODE

#include <algorithm>
#include <cstdint>
#include <vector>

extern "C" void sum_reduction_launch(const float* x, float* y, int64_t outer, int64_t reduce,
                                     int64_t inner, void* /*stream*/) {
    // Walking the reduced axis in the outer loop keeps memory accesses sequential; double
    // accumulators because this path is a correctness reference, not a fast path.
    std::vector<double> acc(static_cast<size_t>(inner));
    for (int64_t o = 0; o < outer; ++o) {
        std::fill(acc.begin(), acc.end(), 0.0);
        const float* base = x + o * reduce * inner;
        for (int64_t r = 0; r < reduce; ++r) {
            const float* row = base + r * inner;
            for (int64_t i = 0; i < inner; ++i) {
                acc[static_cast<size_t>(i)] += row[i];
            }
        }
        for (int64_t i = 0; i < inner; ++i) {
            y[o * inner + i] = static_cast<float>(acc[static_cast<size_t>(i)]);
        }
    }
}

#endif // KWB_CPU_MODE
