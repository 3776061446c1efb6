// Host implementation of conv2d_relu_launch so the solution can be validated without a GPU.

#ifdef KWB_CPU_MODE

#include <algorithm>
#include <cstdint>

namespace {

// out[i] += w * in[i]. The fixed 8-wide body lets the compiler vectorize at -O2 (whose
// cost model refuses loops with an unknown trip count), and __restrict spares it the
// aliasing checks it would otherwise need.
void axpy(float* __restrict out, const float* __restrict in, float w, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (int l = 0; l < 8; ++l) {
            out[i + l] += w * in[i + l];
        }
    }
    for (; i < n; ++i) {
        out[i] += w * in[i];
    }
}

} // namespace

extern "C" void conv2d_relu_launch(const float* x, const float* weight, const float* bias, float* y,
                                   int64_t n, int64_t c_in, int64_t h, int64_t w, int64_t c_out,
                                   int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w,
                                   int64_t pad_h, int64_t pad_w, void* /*stream*/) {
    const int64_t out_h = (h + 2 * pad_h - kh) / stride_h + 1;
    const int64_t out_w = (w + 2 * pad_w - kw) / stride_w + 1;
    if (out_h <= 0 || out_w <= 0) {
        return;
    }
    // Scatter form: each weight tap is added to a whole output row at once, so the inner
    // loop is a contiguous axpy rather than a per-output gather with bounds checks.
    for (int64_t b = 0; b < n; ++b) {
        for (int64_t oc = 0; oc < c_out; ++oc) {
            float* out = y + (b * c_out + oc) * out_h * out_w;
            std::fill(out, out + out_h * out_w, bias[oc]);
            for (int64_t ic = 0; ic < c_in; ++ic) {
                const float* in = x + (b * c_in + ic) * h * w;
                const float* wk = weight + (oc * c_in + ic) * kh * kw;
                for (int64_t r = 0; r < kh; ++r) {
                    for (int64_t q = 0; q < kw; ++q) {
                        const float wv = wk[r * kw + q];
                        // Output columns whose input column ow * stride_w - pad_w + q is
                        // inside the image.
                        int64_t ow_lo = 0;
                        while (ow_lo < out_w && ow_lo * stride_w - pad_w + q < 0) {
                            ++ow_lo;
                        }
                        int64_t ow_hi = out_w;
                        while (ow_hi > ow_lo && (ow_hi - 1) * stride_w - pad_w + q >= w) {
                            --ow_hi;
                        }
                        for (int64_t oh = 0; oh < out_h; ++oh) {
                            const int64_t ih = oh * stride_h - pad_h + r;
                            if (ih < 0 || ih >= h) {
                                continue;
                            }
                            const float* in_row = in + ih * w - pad_w + q;
                            float* out_row = out + oh * out_w;
                            if (stride_w == 1) {
                                axpy(out_row + ow_lo, in_row + ow_lo, wv, ow_hi - ow_lo);
                            } else {
                                for (int64_t ow = ow_lo; ow < ow_hi; ++ow) {
                                    out_row[ow] += wv * in_row[ow * stride_w];
                                }
                            }
                        }
                    }
                }
            }
            for (int64_t i = 0; i < out_h * out_w; ++i) {
                out[i] = std::max(out[i], 0.0f);
            }
        }
    }
}

#endif // KWB_CPU_MODE
