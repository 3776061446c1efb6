// On-demand counters without a GPU: the ncu command line an evaluation wraps its profile stage
// in, the sections it accepts, and a report's pages printed to CSV (by a stand-in ncu that prints
// the recorded pages in tests/data/ncu) and read back by engine/counters.
#include "engine/counters/ncu_files.h"
#include "engine/counters/ncu_report.h"
#include "engine/evaluation/ncu_collection.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace kwb;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const char* name) {
    const fs::path dir =
        fs::temp_directory_path() / ("kwb-ncu-collection-" + std::to_string(::getpid()) + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// An `ncu` that answers `--import REPORT --csv --page P` with the recorded page P, and fails for
// a report named "broken".
fs::path fakeNcu(const fs::path& dir) {
    const fs::path script = dir / "ncu";
    std::ofstream(script) << "#!/bin/sh\n"
                          << "case \"$2\" in *broken*) echo 'cannot open report' >&2; exit 3;; "
                             "esac\n"
                          << "cat '" << KWB_TEST_DATA_DIR << "/ncu/'\"$5\".csv\n";
    fs::permissions(script, fs::perms::owner_all);
    return script;
}

} // namespace

TEST(NcuCollection, TheProfileCommandNamesTheSectionsKernelAndReport) {
    CounterCollection collection;
    collection.kernelRegex = "gelu_.*";
    collection.launchCount = 3;
    const auto argv = ncuProfileArguments("/opt/ncu", collection, "/r/counters");
    const std::vector<std::string> head = {
        "/opt/ncu", "--target-processes", "all",          "--launch-count",
        "3",        "--kernel-name",      "regex:gelu_.*"};
    ASSERT_GE(argv.size(), head.size());
    EXPECT_TRUE(std::equal(head.begin(), head.end(), argv.begin()));
    // The default sections, each after its own --section.
    for (const std::string& section : kDefaultNcuSections) {
        const auto at = std::find(argv.begin(), argv.end(), section);
        ASSERT_NE(at, argv.end()) << section;
        EXPECT_EQ(*(at - 1), "--section");
    }
    EXPECT_EQ(argv[argv.size() - 3], "--export");
    EXPECT_EQ(argv[argv.size() - 2], "/r/counters");
    EXPECT_EQ(argv.back(), "--force-overwrite");

    collection.sections = {"Occupancy"};
    collection.kernelRegex.clear();
    collection.launchCount = 0; // at least one launch
    const auto chosen = ncuProfileArguments("ncu", collection, "/r/x");
    EXPECT_EQ(std::count(chosen.begin(), chosen.end(), "--section"), 1);
    EXPECT_EQ(std::count(chosen.begin(), chosen.end(), "--kernel-name"), 0);
    EXPECT_EQ(std::count(chosen.begin(), chosen.end(), "--kernel-name"), 0);
    EXPECT_EQ(chosen[4], "1");
}

TEST(NcuCollection, TheWorkspacesOwnKernelsAreFoundByTheirDeclarations) {
    const fs::path ws = scratch("-declared");
    fs::create_directories(ws / "kernels");
    std::ofstream(ws / "kernels" / "gelu.cu")
        << "__global__ void __launch_bounds__(256) gelu_vec4_kernel(const float4* x) {}\n"
        << "template <int N>\n__global__ void tiled(float* y) {}\n"
        << "extern \"C\" __global__ void plain_c(int n) {}\n"
        << "__device__ float helper(float v) { return v; }\n";
    std::ofstream(ws / "kernels" / "notes.txt") << "__global__ void not_a_source(int) {}\n";
    std::ofstream(ws / "binding.cpp") << "// __global__ void in_a_comment(\n";
    fs::create_symlink("/etc/hostname", ws / "kernels" / "linked.cu");
    const auto names = declaredKernelNames(ws);
    EXPECT_EQ(names,
              (std::vector<std::string>{"gelu_vec4_kernel", "in_a_comment", "plain_c", "tiled"}));
    EXPECT_EQ(kernelNameFilter(names), "(gelu_vec4_kernel|in_a_comment|plain_c|tiled)");
    EXPECT_EQ(kernelNameFilter({}), "");
    EXPECT_TRUE(declaredKernelNames(ws / "missing").empty());
    fs::remove_all(ws);
}

TEST(NcuCollection, OnlySectionIdentifiersAreAccepted) {
    for (const std::string& section : kOfferedNcuSections)
        EXPECT_EQ(ncuSectionProblem(section), "") << section;
    for (const char* bad : {"", "--export", "Speed Of Light", "a;b", "x/../y"})
        EXPECT_NE(ncuSectionProblem(bad), "") << bad;
}

TEST(NcuCollection, KwbNcuNamesTheProgramAndAMissingOneIsNone) {
    const fs::path dir = scratch("-path");
    const fs::path ncu = fakeNcu(dir);
    ::setenv("KWB_NCU", ncu.c_str(), 1);
    EXPECT_EQ(ncuPath(), ncu.string());
    ::setenv("KWB_NCU", (dir / "missing").c_str(), 1);
    EXPECT_EQ(ncuPath(), "");
    ::unsetenv("KWB_NCU");
    fs::remove_all(dir);
}

TEST(NcuCollection, AReportsPagesArePrintedToCsvThatReadsBack) {
    const fs::path dir = scratch("-pages");
    const fs::path ncu = fakeNcu(dir);
    fs::create_directories(dir / "run");
    const fs::path report = dir / "run" / "counters.ncu-rep";
    std::ofstream(report) << "report";
    const NcuCsvPages pages = exportNcuPages(ncu.string(), report);
    ASSERT_TRUE(pages.ok) << pages.error;
    EXPECT_EQ(pages.detailsCsv, (dir / "run" / "details.csv").string());
    EXPECT_EQ(pages.rawCsv, (dir / "run" / "raw.csv").string());

    std::string details, raw, error;
    ASSERT_TRUE(counters::readNcuFile(pages.detailsCsv, &details, &error)) << error;
    ASSERT_TRUE(counters::readNcuFile(pages.rawCsv, &raw, &error)) << error;
    auto parsed = counters::parseNcuDetails(details, &error);
    ASSERT_TRUE(parsed) << error;
    EXPECT_FALSE(parsed->kernels.empty());
    EXPECT_TRUE(counters::addNcuRawPage(*parsed, raw, &error)) << error;

    // An ncu that fails says which page and why; nothing is claimed.
    const fs::path broken = dir / "run" / "broken.ncu-rep";
    std::ofstream(broken) << "x";
    const NcuCsvPages failed = exportNcuPages(ncu.string(), broken);
    EXPECT_FALSE(failed.ok);
    EXPECT_NE(failed.error.find("--page details"), std::string::npos) << failed.error;
    EXPECT_NE(failed.error.find("cannot open report"), std::string::npos) << failed.error;
    fs::remove_all(dir);
}
