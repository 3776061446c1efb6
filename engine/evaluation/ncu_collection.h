#pragma once

#include <filesystem>
#include <stop_token>
#include <string>
#include <vector>

namespace kwb {

// Hardware counters for a candidate's kernels, collected on demand: the profile stage runs once
// more under Nsight Compute (`ncu`) with the chosen sections, its report is saved, and its
// details and raw pages are printed to CSV for engine/counters to read (kwb counters, the
// Counters dock). Counters are never timings: an evaluation that collected them reports no
// speed-up (ncu replays each profiled kernel many times).
struct CounterCollection {
    // Nsight Compute section identifiers (`ncu --list-sections`); empty: kDefaultNcuSections.
    std::vector<std::string> sections;
    // Only kernels whose name matches (ncu's `regex:`); empty: every kernel.
    std::string kernelRegex;
    int launchCount = 4;      // kernel launches profiled, at most
    std::string reportFolder; // empty: <build>/counters/<time>/
    // Without a kernelRegex: only the workspace's own kernels (the __global__ functions its
    // sources declare, declaredKernelNames), not the inputs' set-up, the baselines' or the
    // judge's. The candidate runs in a process of its own, so ncu's NVTX filter cannot tell its
    // launches apart (the judge's ranges are not on its stack): names can.
    bool ownKernelsOnly = true;
};

// What the workbench offers: speed of light, memory workload, occupancy and the roofline.
extern const std::vector<std::string> kDefaultNcuSections;
// Every section the Counters dock lets a user pick, with kDefaultNcuSections first.
extern const std::vector<std::string> kOfferedNcuSections;

// Why `section` is not one ncu can be asked for here, or "" (identifiers are letters, digits
// and underscores: nothing a shell or ncu's own parser could read as an option).
std::string ncuSectionProblem(const std::string& section);

// $KWB_NCU, else `ncu` on PATH, else the CUDA toolkit's (/usr/local/cuda/bin/ncu); "" when none.
std::string ncuPath();

// The __global__ function names declared in the workspace's kernel sources (kernels/*.cu, .cuh,
// .cpp, .h, .hpp and the folder's own), read without following links, sorted.
std::vector<std::string> declaredKernelNames(const std::filesystem::path& workspace);

// ncu's name filter for those kernels: "(a|b|c)", or "" for none.
std::string kernelNameFilter(const std::vector<std::string>& names);

// The arguments that put a command under ncu: `ncu --target-processes all --launch-count N
// [--kernel-name regex:R] --section S ... --export REPORT --force-overwrite`, to be followed by
// the command itself. `reportBase` is the report's path
// without the .ncu-rep suffix.
std::vector<std::string> ncuProfileArguments(const std::string& ncu,
                                             const CounterCollection& collection,
                                             const std::string& reportBase);

struct NcuCsvPages {
    bool ok = false;
    std::string detailsCsv; // paths of the written pages
    std::string rawCsv;
    std::string error;
};

// Prints the report's details and raw pages (`ncu --import REPORT --csv --page details|raw`)
// into details.csv and raw.csv beside it.
NcuCsvPages exportNcuPages(const std::string& ncu, const std::filesystem::path& report,
                           std::stop_token stop = {});

} // namespace kwb
