#pragma once

// The captured compiler logs and sources in tests/data/diagnostics (see README.md there).
#include "tests/test_files.h"

#include <filesystem>
#include <string>

namespace kwb::test {

inline std::filesystem::path diagnosticsData(const std::string& name) {
    return std::filesystem::path(KWB_TEST_DATA_DIR) / "diagnostics" / name;
}

inline std::string diagnosticsText(const std::string& name) {
    return readText(diagnosticsData(name));
}

} // namespace kwb::test
