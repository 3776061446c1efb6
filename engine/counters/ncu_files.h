#pragma once

#include "engine/counters/ncu_report.h"

#include <memory>
#include <string>
#include <vector>

namespace kwb::counters {

// Nsight Compute output a user opened: the details page, and the raw page when one was given.
struct LoadedCounters {
    std::shared_ptr<const NcuReport> report; // null when the files cannot be read (see error)
    std::string error;
    std::string detailsPath;
    std::string rawPath; // empty: no raw page, so no roofline
};

// Reads a file of ncu output whole; false with `error` ("cannot read PATH", or a file over
// 1 GiB, which is no ncu CSV).
bool readNcuFile(const std::string& path, std::string* text, std::string* error);

// Whether CSV text is ncu's raw page (a units row follows the header) rather than its details
// page, so that a user can pick the files in any order.
bool isNcuRawPage(const std::string& text);

// Reads one or two files: exactly one details page, at most one raw page, told apart by their
// content. The error names the file and the reason.
LoadedCounters loadNcuFiles(const std::vector<std::string>& paths);

} // namespace kwb::counters
