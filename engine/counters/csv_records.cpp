#include "engine/counters/csv_records.h"

namespace kwb::counters {
namespace {

bool endsRecord(std::string_view text, std::size_t i) {
    return text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] == '\n'));
}

} // namespace

std::optional<std::vector<CsvRecord>> readCsvRecords(std::string_view text, std::string* error) {
    std::vector<CsvRecord> records;
    const std::size_t n = text.size();
    std::size_t i = 0;
    int line = 1;
    while (i < n) {
        CsvRecord record;
        record.line = line;
        while (true) { // one field
            std::string field;
            if (i < n && text[i] == '"') {
                const int opened = line;
                ++i;
                bool closed = false;
                while (i < n) {
                    if (text[i] == '"') {
                        if (i + 1 < n && text[i + 1] == '"') {
                            field += '"';
                            i += 2;
                            continue;
                        }
                        ++i;
                        closed = true;
                        break;
                    }
                    if (text[i] == '\n')
                        ++line;
                    field += text[i++];
                }
                if (!closed) {
                    *error = "line " + std::to_string(opened) + ": a quoted field is never closed";
                    return std::nullopt;
                }
                if (i < n && text[i] != ',' && !endsRecord(text, i)) {
                    *error = "line " + std::to_string(line) + ": text after a closing quote";
                    return std::nullopt;
                }
            } else {
                while (i < n && text[i] != ',' && !endsRecord(text, i))
                    field += text[i++];
            }
            record.fields.push_back(std::move(field));
            if (i < n && text[i] == ',') {
                ++i;
                continue;
            }
            if (i < n && text[i] == '\r')
                ++i;
            if (i < n && text[i] == '\n') {
                ++i;
                ++line;
            }
            break;
        }
        // A line with nothing on it is not a record of one empty field.
        if (!(record.fields.size() == 1 && record.fields[0].empty()))
            records.push_back(std::move(record));
    }
    return records;
}

} // namespace kwb::counters
