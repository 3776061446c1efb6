#include "engine/counters/ncu_files.h"

#include "engine/counters/csv_records.h"

#include <fstream>

namespace kwb::counters {
namespace {

constexpr std::size_t kMaxFileBytes = std::size_t(1) << 30; // a report of ~100k launches

} // namespace

bool readNcuFile(const std::string& path, std::string* text, std::string* error) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        *error = "cannot read " + path;
        return false;
    }
    const auto size = static_cast<std::size_t>(in.tellg());
    if (size > kMaxFileBytes) {
        *error = path + " is larger than 1 GiB: not ncu's CSV";
        return false;
    }
    in.seekg(0);
    text->resize(size);
    in.read(text->data(), static_cast<std::streamsize>(size));
    return true;
}

bool isNcuRawPage(const std::string& text) {
    // The header and the next line are enough: read only those.
    const std::size_t header = text.find("\"ID\",");
    if (header == std::string::npos || (header > 0 && text[header - 1] != '\n'))
        return false;
    std::size_t end = text.find('\n', header);
    end = end == std::string::npos ? text.size() : text.find('\n', end + 1);
    std::string error;
    const auto records = readCsvRecords(
        std::string_view(text).substr(header, end == std::string::npos ? text.npos : end - header),
        &error);
    return records && records->size() >= 2 && !(*records)[1].fields.empty() &&
           (*records)[1].fields[0].empty();
}

LoadedCounters loadNcuFiles(const std::vector<std::string>& paths) {
    LoadedCounters loaded;
    if (paths.empty() || paths.size() > 2) {
        loaded.error = "open ncu's details page, and its raw page for the roofline (one or two "
                       "CSV files)";
        return loaded;
    }
    std::string detailsText, rawText;
    for (const std::string& path : paths) {
        std::string text;
        if (!readNcuFile(path, &text, &loaded.error))
            return loaded;
        const bool raw = isNcuRawPage(text);
        std::string& slot = raw ? loaded.rawPath : loaded.detailsPath;
        if (!slot.empty()) {
            loaded.error = "both files are ncu's " + std::string(raw ? "raw" : "details") +
                           " page: " + slot + " and " + path;
            return loaded;
        }
        slot = path;
        (raw ? rawText : detailsText) = std::move(text);
    }
    if (loaded.detailsPath.empty()) {
        loaded.error = loaded.rawPath + " is ncu's raw page; open its details page too "
                                        "(`ncu --import R --csv --page details`)";
        return loaded;
    }
    auto report = parseNcuDetails(detailsText, &loaded.error);
    if (!report) {
        loaded.error = loaded.detailsPath + ": " + loaded.error;
        return loaded;
    }
    if (!loaded.rawPath.empty() && !addNcuRawPage(*report, rawText, &loaded.error)) {
        loaded.error = loaded.rawPath + ": " + loaded.error;
        return loaded;
    }
    loaded.report = std::make_shared<const NcuReport>(std::move(*report));
    return loaded;
}

} // namespace kwb::counters
