#include "engine/counters/ncu_report.h"

#include "engine/counters/csv_records.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace kwb::counters {
namespace {

// "5,242,782" -> 5242782, "3.50" -> 3.5; nullopt for anything else ("no data", "(256, 1, 1)").
std::optional<double> numberIn(std::string_view text) {
    std::string digits;
    for (const char c : text)
        if (c != ',')
            digits += c;
    if (digits.empty())
        return std::nullopt;
    double value = 0;
    const auto [end, problem] =
        std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (problem != std::errc() || end != digits.data() + digits.size() || !std::isfinite(value))
        return std::nullopt;
    return value;
}

MetricValue valueOf(std::string unit, std::string text) {
    MetricValue v{std::move(unit), std::move(text), std::nullopt};
    v.value = numberIn(v.text);
    return v;
}

// A unit's scale prefix and what is left: "Gbyte/s" -> (1e9, "byte/s"), "ms" -> (1e-3, "s").
std::pair<double, std::string> splitPrefix(const std::string& unit) {
    static const std::array<std::string, 4> bases = {"byte", "hz", "s", "inst"};
    static const std::array<std::pair<char, double>, 7> prefixes = {
        {{'n', 1e-9}, {'u', 1e-6}, {'m', 1e-3}, {'K', 1e3}, {'M', 1e6}, {'G', 1e9}, {'T', 1e12}}};
    if (unit.size() < 2)
        return {1.0, unit};
    for (const auto& [letter, scale] : prefixes) {
        if (unit[0] != letter)
            continue;
        const std::string rest = unit.substr(1);
        for (const std::string& base : bases) {
            // "Ghz" is how ncu writes gigahertz.
            const bool matches = rest.rfind(base, 0) == 0 &&
                                 (rest.size() == base.size() || rest[base.size()] == '/');
            if (matches)
                return {scale, rest};
        }
    }
    return {1.0, unit};
}

std::size_t columnOf(const std::vector<std::string>& header, std::string_view name) {
    const auto found = std::find(header.begin(), header.end(), name);
    return found == header.end() ? std::string::npos : std::size_t(found - header.begin());
}

// The records from the header row on: ncu prints its own lines and the program's before it.
std::optional<std::vector<CsvRecord>> recordsFromHeader(std::string_view text, std::string* error) {
    std::size_t start = 0;
    while (start < text.size() && text.compare(start, 5, "\"ID\",") != 0) {
        const std::size_t next = text.find('\n', start);
        if (next == std::string_view::npos) {
            *error = "no ncu CSV header (a line starting \"ID\",): not `ncu --csv` output";
            return std::nullopt;
        }
        start = next + 1;
    }
    if (start >= text.size()) {
        *error = "no ncu CSV header (a line starting \"ID\",): not `ncu --csv` output";
        return std::nullopt;
    }
    return readCsvRecords(text.substr(start), error);
}

struct LaunchColumns {
    std::size_t id, process, kernel, context, stream, block, grid, device, cc;
};

std::optional<LaunchColumns> launchColumns(const std::vector<std::string>& header,
                                           std::string* error) {
    LaunchColumns c{columnOf(header, "ID"),          columnOf(header, "Process Name"),
                    columnOf(header, "Kernel Name"), columnOf(header, "Context"),
                    columnOf(header, "Stream"),      columnOf(header, "Block Size"),
                    columnOf(header, "Grid Size"),   columnOf(header, "Device"),
                    columnOf(header, "CC")};
    if (c.id == std::string::npos || c.kernel == std::string::npos) {
        *error = "the CSV header has no \"ID\" or \"Kernel Name\" column";
        return std::nullopt;
    }
    return c;
}

std::string fieldAt(const CsvRecord& r, std::size_t column) {
    return column < r.fields.size() ? r.fields[column] : std::string();
}

std::optional<int> idOf(const CsvRecord& r, std::size_t column, std::string* error) {
    const auto id = numberIn(fieldAt(r, column));
    if (!id || *id < 0 || *id != std::floor(*id)) {
        *error = "line " + std::to_string(r.line) + ": the ID '" + fieldAt(r, column) +
                 "' is not a launch number";
        return std::nullopt;
    }
    return int(*id);
}

} // namespace

std::optional<double> MetricValue::baseValue() const {
    if (!value)
        return std::nullopt;
    return *value * splitPrefix(unit).first;
}

std::string MetricValue::baseUnit() const {
    return splitPrefix(unit).second;
}

std::string MetricValue::display() const {
    return unit.empty() ? text : text + " " + unit;
}

const SectionMetric* KernelCounters::metric(std::string_view section, std::string_view name) const {
    for (const SectionMetric& m : metrics)
        if (m.section == section && m.name == name)
            return &m;
    return nullptr;
}

const SectionMetric* KernelCounters::metric(std::string_view name) const {
    for (const SectionMetric& m : metrics)
        if (m.name == name)
            return &m;
    return nullptr;
}

std::optional<double> KernelCounters::rawBase(const std::string& name) const {
    const auto found = raw.find(name);
    return found == raw.end() ? std::nullopt : found->second.baseValue();
}

std::string kernelHeadName(const std::string& kernelName) {
    return kernelName.substr(0, kernelName.find('('));
}

const KernelCounters* NcuReport::kernel(int id) const {
    for (const KernelCounters& k : kernels)
        if (k.id == id)
            return &k;
    return nullptr;
}

std::optional<NcuReport> parseNcuDetails(std::string_view text, std::string* error) {
    auto records = recordsFromHeader(text, error);
    if (!records)
        return std::nullopt;
    const std::vector<std::string>& header = records->front().fields;
    const auto launch = launchColumns(header, error);
    if (!launch)
        return std::nullopt;
    const std::size_t section = columnOf(header, "Section Name");
    const std::size_t metricName = columnOf(header, "Metric Name");
    const std::size_t unit = columnOf(header, "Metric Unit");
    const std::size_t value = columnOf(header, "Metric Value");
    const std::size_t rule = columnOf(header, "Rule Name");
    const std::size_t ruleType = columnOf(header, "Rule Type");
    const std::size_t ruleText = columnOf(header, "Rule Description");
    const std::size_t speedupType = columnOf(header, "Estimated Speedup Type");
    const std::size_t speedup = columnOf(header, "Estimated Speedup");
    if (section == std::string::npos || metricName == std::string::npos ||
        value == std::string::npos) {
        *error = "the CSV has no \"Section Name\", \"Metric Name\" or \"Metric Value\" column: "
                 "not the details page (`--page details`)";
        return std::nullopt;
    }
    NcuReport report;
    for (std::size_t r = 1; r < records->size(); ++r) {
        const CsvRecord& record = (*records)[r];
        // ncu leaves the rule columns off a metric's row, so a row may be shorter than the
        // header, never longer, and never without its metric's columns.
        if (record.fields.size() > header.size() || record.fields.size() <= value) {
            *error = "line " + std::to_string(record.line) + ": " +
                     std::to_string(record.fields.size()) + " fields where the header has " +
                     std::to_string(header.size());
            return std::nullopt;
        }
        const auto id = idOf(record, launch->id, error);
        if (!id)
            return std::nullopt;
        if (report.kernels.empty() || report.kernels.back().id != *id) {
            if (report.kernel(*id)) {
                *error = "line " + std::to_string(record.line) + ": launch " + std::to_string(*id) +
                         " appears again after another launch";
                return std::nullopt;
            }
            KernelCounters k;
            k.id = *id;
            k.kernelName = fieldAt(record, launch->kernel);
            k.processName = fieldAt(record, launch->process);
            k.context = fieldAt(record, launch->context);
            k.stream = fieldAt(record, launch->stream);
            k.blockSize = fieldAt(record, launch->block);
            k.gridSize = fieldAt(record, launch->grid);
            k.device = fieldAt(record, launch->device);
            k.computeCapability = fieldAt(record, launch->cc);
            report.kernels.push_back(std::move(k));
        }
        KernelCounters& k = report.kernels.back();
        const std::string ruleName = fieldAt(record, rule);
        if (!ruleName.empty()) {
            RuleFinding f;
            f.section = fieldAt(record, section);
            f.rule = ruleName;
            f.type = fieldAt(record, ruleType);
            f.description = fieldAt(record, ruleText);
            f.speedupType = fieldAt(record, speedupType);
            f.estimatedSpeedup = numberIn(fieldAt(record, speedup));
            k.findings.push_back(std::move(f));
        } else if (!fieldAt(record, metricName).empty()) {
            k.metrics.push_back({fieldAt(record, section), fieldAt(record, metricName),
                                 valueOf(fieldAt(record, unit), fieldAt(record, value))});
        }
    }
    if (report.kernels.empty()) {
        *error = "the CSV has a header but no profiled kernel";
        return std::nullopt;
    }
    return report;
}

bool addNcuRawPage(NcuReport& report, std::string_view text, std::string* error) {
    auto records = recordsFromHeader(text, error);
    if (!records)
        return false;
    const std::vector<std::string>& header = records->front().fields;
    const auto launch = launchColumns(header, error);
    if (!launch)
        return false;
    // The raw page's second row holds the units: its ID cell is empty.
    if (records->size() < 2 || !fieldAt((*records)[1], launch->id).empty()) {
        *error = "no units row after the header: not the raw page (`--page raw`)";
        return false;
    }
    const std::vector<std::string>& units = (*records)[1].fields;
    for (std::size_t r = 2; r < records->size(); ++r) {
        const CsvRecord& record = (*records)[r];
        if (record.fields.size() != header.size()) {
            *error = "line " + std::to_string(record.line) + ": " +
                     std::to_string(record.fields.size()) + " fields where the header has " +
                     std::to_string(header.size());
            return false;
        }
        const auto id = idOf(record, launch->id, error);
        if (!id)
            return false;
        auto kernel = std::find_if(report.kernels.begin(), report.kernels.end(),
                                   [&](const KernelCounters& k) { return k.id == *id; });
        if (kernel == report.kernels.end()) {
            *error = "line " + std::to_string(record.line) + ": launch " + std::to_string(*id) +
                     " is not in the details page";
            return false;
        }
        // The launch columns come before the metrics: "CC" is the last of them.
        const std::size_t first = launch->cc == std::string::npos ? 0 : launch->cc + 1;
        for (std::size_t c = first; c < header.size(); ++c)
            kernel->raw[header[c]] = valueOf(c < units.size() ? units[c] : "", record.fields[c]);
    }
    return true;
}

} // namespace kwb::counters
