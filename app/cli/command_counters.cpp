// `kwb counters DETAILS.csv [--raw RAW.csv] [--compare OTHER.csv [--compare-raw RAW.csv]]`:
// Nsight Compute's CSV pages read back as each kernel's key counters, its place on the roofline
// and ncu's advice, or two runs' kernels side by side.
#include "commands.h"
#include "engine/counters/ncu_comparison.h"
#include "engine/counters/ncu_files.h"
#include "engine/counters/ncu_report.h"
#include "engine/counters/roofline.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

namespace kwb::cli {
namespace {

using nlohmann::json;
using namespace kwb::counters;

struct CountersOptions {
    std::string details, raw, compare, compareRaw, kernel;
    bool json = false;
};

// The details page (and its raw page) from files, or the command ended with the reason.
NcuReport loadReport(const std::string& details, const std::string& raw) {
    const auto read = [](const std::string& path) {
        std::string text, error;
        if (!readNcuFile(path, &text, &error))
            failCommand(error);
        return text;
    };
    std::string error;
    auto report = parseNcuDetails(read(details), &error);
    if (!report)
        failCommand(details + ": " + error);
    if (!raw.empty() && !addNcuRawPage(*report, read(raw), &error))
        failCommand(raw + ": " + error);
    return *report;
}

// kernelHeadName, no wider than a terminal line.
std::string shortName(const std::string& name) {
    const std::string head = kernelHeadName(name);
    return head.size() > 90 ? head.substr(0, 87) + "..." : head;
}

std::string number(double value, const char* format = "%.3g") {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

std::string valueText(const SectionMetric* m) {
    return m ? m->value.display() : "-";
}

json metricJson(const MetricValue& v) {
    json j = {{"unit", v.unit}, {"text", v.text}};
    if (v.value)
        j["value"] = *v.value;
    if (auto base = v.baseValue())
        j["base"] = {{"value", *base}, {"unit", v.baseUnit()}};
    return j;
}

json rooflineJson(const RooflinePoint& p) {
    return {{"precision", p.precision},
            {"flops_per_second", p.flopsPerSecond},
            {"peak_flops_per_second", p.peakFlopsPerSecond},
            {"dram_bytes_per_second", p.dramBytesPerSecond},
            {"peak_dram_bytes_per_second", p.peakDramBytesPerSecond},
            {"intensity", p.intensity()},
            {"ridge_intensity", p.ridgeIntensity()},
            {"memory_bound", p.memoryBound()},
            {"share_of_attainable", p.shareOfAttainable()}};
}

json kernelJson(const KernelCounters& k) {
    json metrics = json::array();
    for (const SectionMetric& m : k.metrics) {
        json row = metricJson(m.value);
        row["section"] = m.section;
        row["name"] = m.name;
        metrics.push_back(row);
    }
    json findings = json::array();
    for (const RuleFinding& f : k.findings) {
        json row = {{"section", f.section},
                    {"rule", f.rule},
                    {"type", f.type},
                    {"description", f.description}};
        if (f.estimatedSpeedup)
            row["estimated_speedup_percent"] = *f.estimatedSpeedup;
        if (!f.speedupType.empty())
            row["speedup_type"] = f.speedupType;
        findings.push_back(row);
    }
    json roofline = json::array();
    for (const RooflinePoint& p : rooflinePoints(k))
        roofline.push_back(rooflineJson(p));
    return {{"id", k.id},         {"kernel", k.kernelName}, {"block", k.blockSize},
            {"grid", k.gridSize}, {"device", k.device},     {"cc", k.computeCapability},
            {"metrics", metrics}, {"findings", findings},   {"roofline", roofline}};
}

void printKernel(std::ostream& out, const KernelCounters& k) {
    out << "[" << k.id << "] " << shortName(k.kernelName) << "  grid " << k.gridSize << " x block "
        << k.blockSize << "\n";
    out << "  duration " << valueText(k.metric("Duration")) << ", compute (SM) "
        << valueText(k.metric("Compute (SM) Throughput")) << ", memory "
        << valueText(k.metric("GPU Speed Of Light Throughput", "Memory Throughput")) << ", DRAM "
        << valueText(k.metric("DRAM Throughput")) << ", achieved occupancy "
        << valueText(k.metric("Achieved Occupancy")) << "\n";
    for (const RooflinePoint& p : rooflinePoints(k)) {
        if (p.flopsPerSecond <= 0)
            continue; // no work of this precision
        out << "  roofline " << p.precision << ": " << number(p.flopsPerSecond / 1e9, "%.1f")
            << " GFLOP/s of " << number(p.peakFlopsPerSecond / 1e9, "%.0f") << ", DRAM "
            << number(p.dramBytesPerSecond / 1e9, "%.1f") << " GB/s of "
            << number(p.peakDramBytesPerSecond / 1e9, "%.0f") << ", "
            << number(p.intensity(), "%.2f") << " flop/byte (ridge "
            << number(p.ridgeIntensity(), "%.1f") << "): "
            << "under the " << (p.memoryBound() ? "memory" : "compute") << " roof, at "
            << number(100 * p.shareOfAttainable(), "%.0f") << "% of its roof\n";
    }
    for (const RuleFinding& f : k.findings) {
        if (f.type == "INF")
            continue;
        out << "  " << f.type << " " << f.rule;
        if (f.estimatedSpeedup)
            out << " (est. " << number(*f.estimatedSpeedup, "%.1f") << "% "
                << (f.speedupType.empty() ? "" : f.speedupType + " ") << "speed-up)";
        const std::string firstSentence = f.description.substr(0, f.description.find(". ") + 1);
        out << ": " << firstSentence << "\n";
    }
}

bool selected(const std::string& filter, const std::string& name) {
    return filter.empty() || name.find(filter) != std::string::npos;
}

void printComparison(std::ostream& out, const std::vector<KernelComparison>& pairs,
                     const std::string& filter) {
    for (const KernelComparison& k : pairs) {
        if (!selected(filter, k.kernelName))
            continue;
        out << shortName(k.kernelName) << "  [" << k.beforeId << "] -> [" << k.afterId << "]\n";
        if (k.beforeId < 0 || k.afterId < 0) {
            out << "  only in the " << (k.beforeId < 0 ? "second" : "first") << " report\n";
            continue;
        }
        for (const MetricChange& c : k.changes) {
            const auto ratio = c.ratio();
            // Unchanged metrics are noise in a comparison: equal (zero on both sides, or no
            // number on either), or within 2%, which the printed pages' rounding reaches.
            const bool equal = c.before == c.after;
            if (equal || (ratio && std::abs(*ratio - 1.0) < 0.02))
                continue;
            out << "  " << c.name << " (" << c.section
                << "): " << (c.before ? number(*c.before, "%.4g") : std::string("-")) << " -> "
                << (c.after ? number(*c.after, "%.4g") : std::string("-")) << " " << c.baseUnit;
            if (ratio)
                out << "  (" << number(*ratio, "%.2f") << "x)";
            out << "\n";
        }
    }
}

json comparisonJson(const std::vector<KernelComparison>& pairs, const std::string& filter) {
    json rows = json::array();
    for (const KernelComparison& k : pairs) {
        if (!selected(filter, k.kernelName))
            continue;
        json changes = json::array();
        for (const MetricChange& c : k.changes) {
            json row = {{"section", c.section}, {"name", c.name}, {"unit", c.baseUnit}};
            row["before"] = c.before ? json(*c.before) : json(nullptr);
            row["after"] = c.after ? json(*c.after) : json(nullptr);
            if (auto r = c.ratio())
                row["ratio"] = *r;
            changes.push_back(row);
        }
        rows.push_back({{"kernel", k.kernelName},
                        {"before_id", k.beforeId},
                        {"after_id", k.afterId},
                        {"changes", changes}});
    }
    return rows;
}

} // namespace

void addCountersCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "counters", "Read Nsight Compute's CSV output: each kernel's counters, roofline and "
                    "advice, or two runs compared");
    auto o = std::make_shared<CountersOptions>();
    cmd->add_option("details", o->details,
                    "`ncu --csv --page details` output (a run's or `ncu --import R`'s)")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option("--raw", o->raw, "`ncu --csv --page raw` output of the same run (roofline)")
        ->check(CLI::ExistingFile);
    auto* compare =
        cmd->add_option("--compare", o->compare, "A second run's details page to compare with")
            ->check(CLI::ExistingFile);
    cmd->add_option("--compare-raw", o->compareRaw, "The second run's raw page")
        ->check(CLI::ExistingFile)
        ->needs(compare);
    cmd->add_option("--kernel", o->kernel, "Only kernels whose name contains this text");
    cmd->add_flag("--json", o->json, "Print JSON");
    cmd->callback([o] {
        const NcuReport report = loadReport(o->details, o->raw);
        if (!o->compare.empty()) {
            const NcuReport other = loadReport(o->compare, o->compareRaw);
            const auto pairs = compareReports(report, other);
            if (o->json)
                std::cout << json{{"comparison", comparisonJson(pairs, o->kernel)}}.dump(2) << "\n";
            else
                printComparison(std::cout, pairs, o->kernel);
            return;
        }
        json kernels = json::array();
        int shown = 0;
        for (const KernelCounters& k : report.kernels) {
            if (!selected(o->kernel, k.kernelName))
                continue;
            ++shown;
            if (o->json)
                kernels.push_back(kernelJson(k));
            else
                printKernel(std::cout, k);
        }
        if (o->json)
            std::cout << json{{"kernels", kernels}}.dump(2) << "\n";
        if (shown == 0)
            failCommand("no kernel's name contains '" + o->kernel + "' (the report has " +
                        std::to_string(report.kernels.size()) + ")");
    });
}

} // namespace kwb::cli
