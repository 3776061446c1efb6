#pragma once

// The hand-written record files under tests/data/timeline, and their known content.
#include "../test_files.h"

#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace kwb::test {

inline std::filesystem::path timelineData(const std::string& name) {
    return std::filesystem::path(KWB_TEST_DATA_DIR) / "timeline" / name;
}

inline std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

// two_streams.jsonl: every timestamp is relative to T0 = 1700000000000; the earliest record
// (warmup_touch) starts at T0 - 500, so that is the origin.
inline constexpr std::int64_t kT0 = 1700000000000;
inline constexpr std::int64_t kOrigin = kT0 - 500;

} // namespace kwb::test
