#include "engine/diagnostics/nvcc_single_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kwb::diagnostics {
namespace {

std::string readWholeFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

NvccSingleFileOutput compileWithNvcc(const NvccSingleFileRequest& request, std::stop_token stop) {
    NvccSingleFileOutput output;
    const fs::path source(request.sourcePath);
    const fs::path work(request.workDirectory);
    const std::string stem = source.stem().string();
    output.objectPath = (work / (stem + ".o")).string();

    ProcessSpec spec;
    spec.argv = {request.nvcc, "-c",         "-x", "cu",        "-arch=" + request.arch,
                 "-std=c++17", "-Xptxas",    "-v", "-lineinfo", "--keep",
                 "--keep-dir", work.string()};
    for (const auto& dir : request.includeDirs)
        spec.argv.push_back("-I" + dir);
    spec.argv.insert(spec.argv.end(), {source.string(), "-o", output.objectPath});
    spec.workingDirectory = work.string();
    spec.timeout = request.timeout;
    spec.outputLimitBytes = 4 * 1024 * 1024;
    spec.stop = stop;
    output.process = runProcess(spec);
    output.log = output.process.err.text;
    if (!output.process.out.text.empty())
        output.log += (output.log.empty() ? "" : "\n") + output.process.out.text;

    std::error_code ec;
    if (fs::is_regular_file(work / (stem + ".ptx"), ec))
        output.ptx = readWholeFile(work / (stem + ".ptx"));
    const std::string numeric = request.arch.substr(request.arch.find('_') + 1);
    if (fs::path cubin = work / (stem + ".sm_" + numeric + ".cubin");
        fs::is_regular_file(cubin, ec))
        output.cubinPath = cubin.string();
    return output;
}

} // namespace kwb::diagnostics
