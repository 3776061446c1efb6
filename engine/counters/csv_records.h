#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::counters {

// One CSV record: its fields, unquoted, and the line it starts on (1-based).
struct CsvRecord {
    std::vector<std::string> fields;
    int line = 0;
};

// Reads RFC 4180 CSV: fields separated by commas, optionally in double quotes (a doubled quote
// inside is one quote; commas and line breaks inside quotes belong to the field), records ended
// by LF or CRLF; empty lines are skipped. nullopt with `error` (naming the line) for a quote
// that is never closed or text after a closing quote.
//
// Written here rather than taken from Debian's libcsv: the engine must build on GPU hosts that
// have no -dev packages and no network, and Nsight Compute's output needs only this much.
std::optional<std::vector<CsvRecord>> readCsvRecords(std::string_view text, std::string* error);

} // namespace kwb::counters
