#include "engine/model/ggml_blocks.h"

#include "engine/model/gguf_file.h"

#include <bit>
#include <cstring>

namespace kwb::model {

namespace {

std::uint16_t readU16(const std::uint8_t* p) {
    std::uint16_t v;
    std::memcpy(&v, p, sizeof v); // GGUF is little-endian, as is every host kwb runs on
    return v;
}

// Q4_0 and Q4_1 keep element j of a block in the low nibble of byte j and element j + 16 in
// its high nibble.
void fourBitBlock(const std::uint8_t* qs, float scale, float offset, float* out) {
    for (int j = 0; j < 16; ++j) {
        out[j] = float(qs[j] & 0x0F) * scale + offset;
        out[j + 16] = float(qs[j] >> 4) * scale + offset;
    }
}

} // namespace

float halfToFloat(std::uint16_t bits) {
    const std::uint32_t sign = std::uint32_t(bits & 0x8000) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1F;
    std::uint32_t mantissa = bits & 0x03FF;
    std::uint32_t out;
    if (exponent == 0) {
        if (mantissa == 0) {
            out = sign; // signed zero
        } else {
            // Subnormal: normalise the mantissa into a float's exponent.
            int shift = 0;
            while ((mantissa & 0x0400) == 0) {
                mantissa <<= 1;
                ++shift;
            }
            mantissa &= 0x03FF;
            out = sign | std::uint32_t(127 - 15 - shift + 1) << 23 | mantissa << 13;
        }
    } else if (exponent == 0x1F) {
        out = sign | 0x7F800000u | mantissa << 13; // infinity or NaN
    } else {
        out = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
    }
    return std::bit_cast<float>(out);
}

float bfloat16ToFloat(std::uint16_t bits) {
    return std::bit_cast<float>(std::uint32_t(bits) << 16);
}

std::optional<GgmlBlock> ggmlBlock(std::uint32_t type) {
    switch (static_cast<GgmlType>(type)) {
    case GgmlType::F32:
        return GgmlBlock{1, 4};
    case GgmlType::F16:
    case GgmlType::BF16:
        return GgmlBlock{1, 2};
    case GgmlType::Q4_0:
        return GgmlBlock{32, 2 + 16};
    case GgmlType::Q4_1:
        return GgmlBlock{32, 2 + 2 + 16};
    case GgmlType::Q5_0:
        return GgmlBlock{32, 2 + 4 + 16};
    case GgmlType::Q5_1:
        return GgmlBlock{32, 2 + 2 + 4 + 16};
    case GgmlType::Q8_0:
        return GgmlBlock{32, 2 + 32};
    case GgmlType::Q8_1:
        return GgmlBlock{32, 4 + 4 + 32};
    case GgmlType::Q2_K:
        return GgmlBlock{256, 84};
    case GgmlType::Q3_K:
        return GgmlBlock{256, 110};
    case GgmlType::Q4_K:
        return GgmlBlock{256, 144};
    case GgmlType::Q5_K:
        return GgmlBlock{256, 176};
    case GgmlType::Q6_K:
        return GgmlBlock{256, 210};
    case GgmlType::Q8_K:
        return GgmlBlock{256, 292};
    }
    return std::nullopt;
}

bool dequantizeBlocks(std::uint32_t type, std::span<const std::uint8_t> in, std::span<float> out) {
    const auto block = ggmlBlock(type);
    if (!block || out.size() % block->elements != 0 ||
        in.size() != out.size() / block->elements * block->bytes)
        return false;
    const std::size_t blocks = out.size() / block->elements;
    const std::uint8_t* p = in.data();
    float* o = out.data();
    switch (static_cast<GgmlType>(type)) {
    case GgmlType::F32:
        std::memcpy(o, p, out.size() * sizeof(float));
        return true;
    case GgmlType::F16:
        for (std::size_t i = 0; i < blocks; ++i)
            o[i] = halfToFloat(readU16(p + 2 * i));
        return true;
    case GgmlType::BF16:
        for (std::size_t i = 0; i < blocks; ++i)
            o[i] = bfloat16ToFloat(readU16(p + 2 * i));
        return true;
    case GgmlType::Q4_0:
        // {half d; 16 bytes}: (q - 8) * d
        for (std::size_t b = 0; b < blocks; ++b, p += block->bytes, o += 32) {
            const float d = halfToFloat(readU16(p));
            fourBitBlock(p + 2, d, -8.0f * d, o);
        }
        return true;
    case GgmlType::Q4_1:
        // {half d; half m; 16 bytes}: q * d + m
        for (std::size_t b = 0; b < blocks; ++b, p += block->bytes, o += 32)
            fourBitBlock(p + 4, halfToFloat(readU16(p)), halfToFloat(readU16(p + 2)), o);
        return true;
    case GgmlType::Q8_0:
        // {half d; 32 signed bytes}: q * d
        for (std::size_t b = 0; b < blocks; ++b, p += block->bytes, o += 32) {
            const float d = halfToFloat(readU16(p));
            for (int j = 0; j < 32; ++j)
                o[j] = float(static_cast<std::int8_t>(p[2 + j])) * d;
        }
        return true;
    default:
        return false;
    }
}

} // namespace kwb::model
