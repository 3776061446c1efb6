#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::counters {

// One value Nsight Compute printed: its unit as printed ("ms", "Gbyte/s", "%") and, where the
// text is a number ("5,242,782", "3.50"), the number; "no data" and the like keep only text.
struct MetricValue {
    std::string unit;
    std::string text;
    std::optional<double> value;
    // The number in the unit's base (ms -> s, Gbyte/s -> byte/s, Ghz -> hz, Kbyte -> byte), so
    // that reports printed with different scales compare; the number itself for other units.
    std::optional<double> baseValue() const;
    std::string baseUnit() const;
    // As ncu printed it: "3.50 ms", "5,242,782 cycle", "no data %", or the text alone.
    std::string display() const;
};

// A row of a section on the details page.
struct SectionMetric {
    std::string section; // as ncu names it there ("GPU Speed Of Light Throughput")
    std::string name;    // "Duration"
    MetricValue value;
};

// A rule's finding ("OPT", "WRN", "INF"): what ncu suggests, with its estimated speed-up.
struct RuleFinding {
    std::string section; // the section's identifier ("Occupancy", "SpeedOfLight")
    std::string rule;    // "TheoreticalOccupancy"
    std::string type;    // "OPT", "WRN", "INF", "ERR"
    std::string description;
    std::string speedupType;                // "local", "global" or empty
    std::optional<double> estimatedSpeedup; // percent
};

// One profiled kernel launch.
struct KernelCounters {
    int id = -1; // ncu's launch index in the report
    std::string kernelName;
    std::string processName;
    std::string device; // ncu's device index
    std::string computeCapability;
    std::string context, stream;
    std::string blockSize, gridSize;    // "(256, 1, 1)"
    std::vector<SectionMetric> metrics; // the details page, in ncu's order
    std::vector<RuleFinding> findings;
    std::map<std::string, MetricValue> raw; // the raw page: metric name -> value

    const SectionMetric* metric(std::string_view section, std::string_view name) const;
    // The first details metric of this name in any section.
    const SectionMetric* metric(std::string_view name) const;
    std::optional<double> rawBase(const std::string& name) const;
};

// A kernel's name up to its argument list: templated names run to hundreds of characters, and
// the head says which kernel it is.
std::string kernelHeadName(const std::string& kernelName);

// What one ncu run printed as CSV.
struct NcuReport {
    std::vector<KernelCounters> kernels;
    const KernelCounters* kernel(int id) const;
};

// Reads `ncu --csv --page details` output (from a run or `--import`): lines before the CSV
// header (ncu's "==PROF==" lines, the program's own output) are skipped. nullopt with `error`
// for text that is not that page (no header, missing columns, a record of the wrong width, an
// ID that is not a number).
std::optional<NcuReport> parseNcuDetails(std::string_view text, std::string* error);

// Adds `ncu --csv --page raw` output (a header row, a units row, a row per kernel) to the
// kernels of the same ID in `report`; false with `error` when it is not that page or names a
// kernel the report lacks.
bool addNcuRawPage(NcuReport& report, std::string_view text, std::string* error);

} // namespace kwb::counters
