#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace kwb::model {

// ggml's block layouts: how many elements one block holds and how many bytes it takes.
struct GgmlBlock {
    std::uint32_t elements = 0;
    std::uint32_t bytes = 0;
};
std::optional<GgmlBlock> ggmlBlock(std::uint32_t type);

// Dequantizes whole blocks of `type` from `in` into `out` (out.size() elements, a multiple of
// the block's). False for a type without a reader here (the K-quants, Q5_*) or sizes that do
// not match.
bool dequantizeBlocks(std::uint32_t type, std::span<const std::uint8_t> in, std::span<float> out);

float halfToFloat(std::uint16_t bits);
float bfloat16ToFloat(std::uint16_t bits);

} // namespace kwb::model
