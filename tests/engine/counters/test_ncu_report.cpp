// Nsight Compute's CSV output read into counters, roofline points and comparisons, on output
// recorded on the H200 (tests/data/ncu/README.md) and on damaged copies of it.
#include "engine/counters/csv_records.h"
#include "engine/counters/ncu_comparison.h"
#include "engine/counters/ncu_files.h"
#include "engine/counters/ncu_report.h"
#include "engine/counters/roofline.h"
#include "tests/test_files.h"

#include <algorithm>
#include <gtest/gtest.h>

namespace kwb::counters {
namespace {

std::string recorded(const std::string& name) {
    return test::readText(std::string(KWB_TEST_DATA_DIR) + "/ncu/" + name);
}

NcuReport parsed(const std::string& name) {
    std::string error;
    auto report = parseNcuDetails(recorded(name), &error);
    EXPECT_TRUE(report) << error;
    return report.value_or(NcuReport{});
}

TEST(CsvRecords, QuotesCommasLineBreaksAndEmptyFields) {
    std::string error;
    const auto records =
        readCsvRecords("a,\"b,c\",\"say \"\"hi\"\"\"\r\n\n\"two\nlines\",,\"\"\nlast,", &error);
    ASSERT_TRUE(records) << error;
    ASSERT_EQ(records->size(), 3u);
    EXPECT_EQ((*records)[0].fields, (std::vector<std::string>{"a", "b,c", "say \"hi\""}));
    EXPECT_EQ((*records)[1].fields, (std::vector<std::string>{"two\nlines", "", ""}));
    EXPECT_EQ((*records)[1].line, 3);
    EXPECT_EQ((*records)[2].fields, (std::vector<std::string>{"last", ""}));
    EXPECT_EQ((*records)[2].line, 5);
    EXPECT_FALSE(readCsvRecords("a,\"never closed\nb", &error));
    EXPECT_NE(error.find("line 1"), std::string::npos) << error;
    EXPECT_FALSE(readCsvRecords("ok\n\"x\"y,z", &error));
    EXPECT_NE(error.find("line 2"), std::string::npos) << error;
}

TEST(NcuReport, TheDetailsPageGivesEachKernelItsSectionsAndFindings) {
    const NcuReport report = parsed("details.csv");
    ASSERT_EQ(report.kernels.size(), 5u);
    const KernelCounters* matmul = report.kernel(3);
    ASSERT_NE(matmul, nullptr);
    EXPECT_NE(matmul->kernelName.find("gemm"), std::string::npos) << matmul->kernelName;
    EXPECT_EQ(matmul->computeCapability, "9.0");
    EXPECT_EQ(matmul->blockSize, "(256, 1, 1)");
    EXPECT_EQ(matmul->gridSize, "(16, 32, 1)");
    EXPECT_EQ(matmul->processName, "python3.12");
    const SectionMetric* cycles = matmul->metric("GPU Speed Of Light Throughput", "Elapsed Cycles");
    ASSERT_NE(cycles, nullptr);
    EXPECT_EQ(cycles->value.value, 5242782.0) << "thousands separators are read";
    const SectionMetric* duration = matmul->metric("Duration");
    ASSERT_NE(duration, nullptr);
    EXPECT_EQ(duration->value.unit, "ms");
    EXPECT_DOUBLE_EQ(*duration->value.baseValue(), 3.50e-3);
    EXPECT_EQ(duration->value.baseUnit(), "s");
    const SectionMetric* spill =
        matmul->metric("Memory Workload Analysis", "Local Memory Spilling Request Overhead");
    ASSERT_NE(spill, nullptr);
    EXPECT_EQ(spill->value.text, "no data");
    EXPECT_FALSE(spill->value.value.has_value());
    EXPECT_EQ(matmul->metric("Occupancy", "Achieved Occupancy")->value.value, 12.5);
    // The "Memory Throughput" of two sections: each keeps its own unit.
    EXPECT_EQ(matmul->metric("GPU Speed Of Light Throughput", "Memory Throughput")->value.unit,
              "%");
    EXPECT_DOUBLE_EQ(
        *matmul->metric("Memory Workload Analysis", "Memory Throughput")->value.baseValue(),
        113.41e9);
    // Findings: the occupancy rule's advice with its estimated speed-up, and the roofline note.
    bool occupancy = false, roofline = false;
    for (const RuleFinding& f : matmul->findings) {
        if (f.rule == "TheoreticalOccupancy") {
            occupancy = true;
            EXPECT_EQ(f.type, "OPT");
            EXPECT_EQ(f.section, "Occupancy");
            EXPECT_EQ(f.speedupType, "local");
            EXPECT_EQ(f.estimatedSpeedup, 87.5);
        }
        roofline = roofline || f.rule == "SOLFPRoofline";
    }
    EXPECT_TRUE(occupancy && roofline);
    // 10 speed-of-light, 12 memory workload and 13 occupancy rows.
    EXPECT_EQ(matmul->metrics.size(), 35u);
}

TEST(NcuReport, ScaledAndBaseUnitsGiveTheSameNumbers) {
    const NcuReport scaled = parsed("details.csv");
    const NcuReport base = parsed("details-base.csv");
    ASSERT_EQ(scaled.kernels.size(), base.kernels.size());
    int compared = 0;
    for (std::size_t k = 0; k < scaled.kernels.size(); ++k)
        for (const SectionMetric& m : scaled.kernels[k].metrics) {
            const SectionMetric* other = base.kernels[k].metric(m.section, m.name);
            ASSERT_NE(other, nullptr) << m.name;
            EXPECT_EQ(m.value.baseUnit(), other->value.baseUnit()) << m.name;
            if (!m.value.value) {
                EXPECT_FALSE(other->value.value.has_value()) << m.name;
                continue;
            }
            // The scaled page rounds to two decimals: 3.50 ms against 3,495,872 ns.
            const double a = *m.value.baseValue(), b = *other->value.baseValue();
            EXPECT_NEAR(a, b, 0.01 * std::max(std::abs(a), std::abs(b)) + 0.006)
                << m.section << " / " << m.name;
            ++compared;
        }
    EXPECT_GT(compared, 150);
}

TEST(NcuReport, ARunsOwnOutputBeforeTheCsvIsSkipped) {
    const NcuReport direct = parsed("direct.csv");
    ASSERT_EQ(direct.kernels.size(), 1u);
    EXPECT_EQ(direct.kernels[0].id, 0);
    EXPECT_NE(direct.kernels[0].metric("Duration"), nullptr);
}

TEST(Roofline, PointsFromTheRawCountersMatchTheirArithmetic) {
    NcuReport report = parsed("details.csv");
    std::string error;
    ASSERT_TRUE(addNcuRawPage(report, recorded("raw.csv"), &error)) << error;
    const KernelCounters& matmul = *report.kernel(3);
    EXPECT_EQ(matmul.raw.size(), 601u);
    const auto points = rooflinePoints(matmul);
    ASSERT_EQ(points.size(), 2u);
    const RooflinePoint& fp32 = points[0];
    EXPECT_EQ(fp32.precision, "FP32");
    // From raw.csv, launch 3: 13,117.902636 FFMA per cycle (no FADD, no FMUL) x 2 flop x
    // 1.498877 GHz; peak 16,896 FFMA per cycle x 2; DRAM 0.113408 TB/s of 1.504 KB/cycle at
    // 3.199484 GHz.
    EXPECT_NEAR(fp32.flopsPerSecond, 2 * 13117.902636 * 1.498877e9, 1e6);
    EXPECT_NEAR(fp32.peakFlopsPerSecond, 2 * 16896 * 1.498877e9, 1e6);
    EXPECT_NEAR(fp32.dramBytesPerSecond, 0.113408e12, 1e3);
    EXPECT_NEAR(fp32.peakDramBytesPerSecond, 1.504e3 * 3.199484e9, 1e3);
    EXPECT_NEAR(fp32.intensity(), 346.75, 0.01);
    EXPECT_FALSE(fp32.memoryBound()) << "a matrix product is far right of the ridge (10.5)";
    EXPECT_NEAR(fp32.shareOfAttainable(), 13117.902636 / 16896, 1e-6);
    // The GELU: 725.375049 FADD + 2,538.812672 FMUL + 2 x 2,371.032583 FFMA per cycle at
    // 1.45429 GHz over 3.457497 TB/s: left of the ridge, bound by memory at 72% of its roof.
    const RooflinePoint gelu = rooflinePoints(*report.kernel(2))[0];
    EXPECT_NEAR(gelu.flopsPerSecond, (725.375049 + 2538.812672 + 2 * 2371.032583) * 1.45429e9, 1e6);
    EXPECT_NEAR(gelu.intensity(), 3.368, 0.001);
    EXPECT_TRUE(gelu.memoryBound());
    EXPECT_NEAR(gelu.shareOfAttainable(), 3.457497e12 / (1.504e3 * 3.196512e9), 1e-4);
    // FP64: no double-precision work in either kernel.
    EXPECT_EQ(points[1].precision, "FP64");
    EXPECT_EQ(points[1].flopsPerSecond, 0.0);
    // Without the raw page there is no point to draw.
    EXPECT_TRUE(rooflinePoints(*parsed("details.csv").kernel(3)).empty());
}

TEST(NcuComparison, KernelsPairByNameAndMetricsCompareInBaseUnits) {
    const NcuReport scaled = parsed("details.csv");
    const NcuReport base = parsed("details-base.csv");
    const auto same = compareReports(scaled, base);
    ASSERT_EQ(same.size(), 5u);
    // The two random fills share a name: first with first, second with second.
    EXPECT_EQ(same[0].afterId, 0);
    EXPECT_EQ(same[1].afterId, 1);
    for (const KernelComparison& k : same)
        for (const MetricChange& c : k.changes)
            if (c.ratio()) {
                EXPECT_NEAR(*c.ratio(), 1.0, 0.02) << c.name;
            }
    // A report without the matrix product: it stays, alone, and nothing else moves.
    NcuReport fewer = base;
    fewer.kernels.erase(fewer.kernels.begin() + 3);
    const auto partial = compareReports(scaled, fewer);
    ASSERT_EQ(partial.size(), 5u);
    EXPECT_EQ(partial[3].beforeId, 3);
    EXPECT_EQ(partial[3].afterId, -1);
    EXPECT_TRUE(partial[3].changes.empty());
    const auto reversed = compareReports(fewer, scaled);
    ASSERT_EQ(reversed.size(), 5u);
    EXPECT_EQ(reversed.back().beforeId, -1);
    EXPECT_EQ(reversed.back().afterId, 3);
    // A metric that changed: the matrix product's duration doubled.
    NcuReport slower = scaled;
    for (SectionMetric& m : slower.kernels[3].metrics)
        if (m.name == "Duration")
            m.value = {"ms", "7.00", 7.0};
    const auto changed = compareReports(scaled, slower);
    for (const MetricChange& c : changed[3].changes)
        if (c.name == "Duration") {
            EXPECT_DOUBLE_EQ(*c.ratio(), 2.0);
            EXPECT_EQ(c.baseUnit, "s");
        }
}

TEST(NcuReport, OutputThatIsNotTheDetailsPageSaysWhy) {
    std::string error;
    EXPECT_FALSE(parseNcuDetails("==PROF== Connected\nno csv here\n", &error));
    EXPECT_NE(error.find("not `ncu --csv` output"), std::string::npos) << error;
    EXPECT_FALSE(parseNcuDetails("", &error));
    // The raw page where the details page is expected.
    EXPECT_FALSE(parseNcuDetails(recorded("raw.csv"), &error));
    EXPECT_NE(error.find("details page"), std::string::npos) << error;
    const std::string details = recorded("details.csv");
    const std::string header = details.substr(0, details.find('\n') + 1);
    EXPECT_FALSE(parseNcuDetails(header, &error));
    EXPECT_NE(error.find("no profiled kernel"), std::string::npos) << error;
    // Cut inside a quoted field of the matrix product's first row: the line it opened on.
    const std::size_t cut = details.find("\n\"3\",\"") + 6;
    const auto lineOfCut = 1 + std::count(details.begin(), details.begin() + cut, '\n');
    EXPECT_FALSE(parseNcuDetails(details.substr(0, cut), &error));
    EXPECT_NE(error.find("line " + std::to_string(lineOfCut) + ": a quoted field is never closed"),
              std::string::npos)
        << error;
    // A record wider than the header.
    const std::string wide = header + "\"0\"" + std::string(30, ',') + "\n";
    EXPECT_FALSE(parseNcuDetails(wide, &error));
    EXPECT_NE(error.find("line 2"), std::string::npos) << error;
    // An ID that is not a launch number.
    std::string badId = details;
    badId.replace(badId.find("\"0\""), 3, "\"x\"");
    EXPECT_FALSE(parseNcuDetails(badId, &error));
    EXPECT_NE(error.find("'x'"), std::string::npos) << error;
    // The raw page: details where it is expected, a launch the report lacks.
    NcuReport report = parsed("details.csv");
    EXPECT_FALSE(addNcuRawPage(report, details, &error));
    EXPECT_NE(error.find("units row"), std::string::npos) << error;
    NcuReport one = parsed("direct.csv");
    EXPECT_FALSE(addNcuRawPage(one, recorded("raw.csv"), &error));
    EXPECT_NE(error.find("launch 1"), std::string::npos) << error;
}

// The files a user picks, in any order: the raw page is told from the details page by its units
// row; two of a kind or a raw page alone say what is missing.
TEST(NcuFiles, TheTwoPagesAreToldApartByTheirContent) {
    const std::string details = std::string(KWB_TEST_DATA_DIR) + "/ncu/details.csv";
    const std::string raw = std::string(KWB_TEST_DATA_DIR) + "/ncu/raw.csv";
    EXPECT_TRUE(isNcuRawPage(recorded("raw.csv")));
    EXPECT_FALSE(isNcuRawPage(recorded("details.csv")));
    EXPECT_FALSE(isNcuRawPage(recorded("direct.csv")));
    for (const auto& order : {std::vector<std::string>{raw, details}, {details, raw}}) {
        const LoadedCounters loaded = loadNcuFiles(order);
        ASSERT_TRUE(loaded.report) << loaded.error;
        EXPECT_EQ(loaded.detailsPath, details);
        EXPECT_EQ(loaded.rawPath, raw);
        EXPECT_EQ(rooflinePoints(*loaded.report->kernel(3)).size(), 2u);
    }
    EXPECT_NE(loadNcuFiles({raw}).error.find("open its details page too"), std::string::npos);
    EXPECT_NE(loadNcuFiles({details, details}).error.find("both files"), std::string::npos);
    EXPECT_NE(loadNcuFiles({details + ".missing"}).error.find("cannot read"), std::string::npos);
    EXPECT_NE(loadNcuFiles({}).error.find("one or two"), std::string::npos);
}

} // namespace
} // namespace kwb::counters
