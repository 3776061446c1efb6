#include "engine/diagnostics/sass_listing.h"

#include "engine/process/process_runner.h"

#include <regex>
#include <sstream>

namespace kwb::diagnostics {

std::vector<std::pair<std::string, std::string>> splitSassFunctions(const std::string& listing) {
    static const std::regex cuobjdumpHeader(R"(^\s*Function\s*:\s*(\S+)\s*$)");
    static const std::regex nvdisasmLabel(R"(^\s*\.text\.([^:\s]+):\s*$)");
    std::vector<std::pair<std::string, std::string>> functions;
    std::istringstream lines(listing);
    std::string line;
    while (std::getline(lines, line)) {
        std::smatch match;
        if (std::regex_match(line, match, cuobjdumpHeader) ||
            std::regex_match(line, match, nvdisasmLabel)) {
            functions.emplace_back(match[1], "");
            continue;
        }
        if (functions.empty())
            continue;
        // cuobjdump closes each function with a row of dots; the next header starts a new one.
        if (line.find("..........") != std::string::npos)
            continue;
        functions.back().second += line + "\n";
    }
    return functions;
}

SassListing disassemble(const std::string& binaryPath, const CudaToolkit& toolkit,
                        std::stop_token stop) {
    SassListing listing;
    std::vector<std::string> argv;
    if (std::string cuobjdump = toolkit.findTool("cuobjdump"); !cuobjdump.empty())
        argv = {cuobjdump, "-sass", binaryPath};
    else if (std::string nvdisasm = toolkit.findTool("nvdisasm"); !nvdisasm.empty())
        argv = {nvdisasm, binaryPath};
    if (argv.empty()) {
        listing.error = "neither cuobjdump nor nvdisasm is installed (PATH or " +
                        (toolkit.root.empty() ? std::string("the CUDA toolkit") : toolkit.root) +
                        "/bin)";
        return listing;
    }
    listing.tool = argv.front();
    ProcessSpec spec;
    spec.argv = argv;
    spec.timeout = std::chrono::seconds(60);
    spec.outputLimitBytes = 32 * 1024 * 1024;
    spec.stop = stop;
    ProcessResult run = runProcess(spec);
    if (!run.succeeded()) {
        listing.error = listing.tool + ": " + run.statusText() +
                        (run.err.text.empty() ? "" : ": " + run.err.text);
        return listing;
    }
    listing.available = true;
    listing.text = run.out.text;
    listing.functions = splitSassFunctions(listing.text);
    return listing;
}

} // namespace kwb::diagnostics
