#include "engine/evaluation/ncu_collection.h"

#include "engine/process/process_runner.h"
#include "engine/process/process_spawn.h"
#include "engine/workspace/contained_files.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>

namespace kwb {
namespace fs = std::filesystem;

const std::vector<std::string> kDefaultNcuSections = {"SpeedOfLight", "SpeedOfLight_RooflineChart",
                                                      "MemoryWorkloadAnalysis", "Occupancy"};

const std::vector<std::string> kOfferedNcuSections = {"SpeedOfLight",
                                                      "SpeedOfLight_RooflineChart",
                                                      "MemoryWorkloadAnalysis",
                                                      "Occupancy",
                                                      "LaunchStats",
                                                      "ComputeWorkloadAnalysis",
                                                      "SchedulerStats",
                                                      "WarpStateStats",
                                                      "SourceCounters",
                                                      "InstructionStats"};

std::string ncuSectionProblem(const std::string& section) {
    if (section.empty())
        return "an empty section name";
    for (const char c : section)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
            return "'" + section + "' is not a section identifier (letters, digits, '_')";
    return {};
}

std::string ncuPath() {
    if (const char* configured = std::getenv("KWB_NCU"); configured && *configured)
        return fs::exists(configured) ? configured : std::string();
    if (std::string onPath = findExecutable("ncu"); !onPath.empty())
        return onPath;
    std::error_code ec;
    return fs::is_regular_file("/usr/local/cuda/bin/ncu", ec) ? "/usr/local/cuda/bin/ncu"
                                                              : std::string();
}

std::vector<std::string> declaredKernelNames(const fs::path& workspace) {
    // The harness's census reads declarations the same way (kernel_census.py): launch bounds
    // removed, then the name before the parameter list (and any template arguments).
    static const std::regex launchBounds(R"(__launch_bounds__\s*\([^)]*\))");
    static const std::regex declaration(
        R"(__global__\s+[\w:<>,\s\*&]*?\b(\w+)\s*(?:<[^>]*>)?\s*\()");
    std::set<std::string> names;
    // The workspace's own folder is the user's or kwb's path: listed from its parent.
    fs::path root = fs::absolute(workspace).lexically_normal();
    if (!root.has_filename())
        root = root.parent_path();
    for (const char* folder : {"", "kernels"}) {
        const std::vector<std::string> files =
            folder[0] ? regularFilesInside(root, folder)
                      : regularFilesInside(root.parent_path(), root.filename().string());
        for (const std::string& file : files) {
            const std::string extension = fs::path(file).extension().string();
            if (extension != ".cu" && extension != ".cuh" && extension != ".cpp" &&
                extension != ".h" && extension != ".hpp")
                continue;
            const std::string relative = folder[0] ? std::string(folder) + "/" + file : file;
            const std::optional<std::string> text =
                readFileInside(root, relative, std::size_t(4) << 20);
            if (!text)
                continue;
            const std::string plain = std::regex_replace(*text, launchBounds, " ");
            for (auto it = std::sregex_iterator(plain.begin(), plain.end(), declaration);
                 it != std::sregex_iterator(); ++it)
                names.insert((*it)[1].str());
        }
    }
    return {names.begin(), names.end()};
}

std::string kernelNameFilter(const std::vector<std::string>& names) {
    if (names.empty())
        return {};
    std::string filter = "(";
    for (std::size_t i = 0; i < names.size(); ++i)
        filter += (i ? "|" : "") + names[i];
    return filter + ")";
}

std::vector<std::string> ncuProfileArguments(const std::string& ncu,
                                             const CounterCollection& collection,
                                             const std::string& reportBase) {
    std::vector<std::string> argv = {ncu, "--target-processes", "all", "--launch-count",
                                     std::to_string(std::max(1, collection.launchCount))};
    if (!collection.kernelRegex.empty()) {
        argv.push_back("--kernel-name");
        argv.push_back("regex:" + collection.kernelRegex);
    }
    for (const std::string& section :
         collection.sections.empty() ? kDefaultNcuSections : collection.sections) {
        argv.push_back("--section");
        argv.push_back(section);
    }
    argv.insert(argv.end(), {"--export", reportBase, "--force-overwrite"});
    return argv;
}

NcuCsvPages exportNcuPages(const std::string& ncu, const fs::path& report, std::stop_token stop) {
    NcuCsvPages pages;
    for (const char* page : {"details", "raw"}) {
        ProcessSpec spec;
        spec.argv = {ncu, "--import", report.string(), "--csv", "--page", page};
        spec.timeout = std::chrono::minutes(2);
        // A raw page holds hundreds of counters per kernel: megabytes for a few launches.
        spec.outputLimitBytes = std::size_t(256) << 20;
        spec.stop = stop;
        const ProcessResult run = runProcess(spec);
        if (!run.succeeded() || run.out.truncated) {
            const std::string why = run.out.truncated ? "its output was cut at 256 MiB"
                                                      : run.statusText() + ": " + run.err.text;
            pages.error =
                "ncu --import " + report.string() + " --page " + page + " failed (" + why + ")";
            return pages;
        }
        const fs::path file = report.parent_path() / (std::string(page) + ".csv");
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << run.out.text;
        if (!out) {
            pages.error = "cannot write " + file.string();
            return pages;
        }
        (std::string(page) == "details" ? pages.detailsCsv : pages.rawCsv) = file.string();
    }
    pages.ok = true;
    return pages;
}

} // namespace kwb
