#include "engine/diagnostics/kernel_check.h"

#include "engine/cuda/gpu_inventory.h"
#include "engine/diagnostics/compiler_log.h"
#include "engine/diagnostics/cuda_toolkit.h"
#include "engine/diagnostics/include_guard.h"
#include "engine/diagnostics/nvcc_single_file.h"
#include "engine/diagnostics/nvrtc_compiler.h"
#include "engine/diagnostics/scratch_directory.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace kwb::diagnostics {
namespace {

const CudaToolkit& toolkit() {
    static const CudaToolkit located = locateCudaToolkit();
    return located;
}

std::vector<std::string> sourceIncludeDirs(const KernelCheckRequest& request) {
    std::vector<std::string> dirs;
    fs::path folder = fs::path(request.path).parent_path();
    if (folder.empty())
        folder = ".";
    std::error_code ec;
    folder = fs::absolute(folder, ec);
    dirs.push_back(folder.string());
    if (folder.filename() != "kernels" && fs::is_directory(folder / "kernels", ec))
        dirs.push_back((folder / "kernels").string());
    dirs.insert(dirs.end(), request.includeDirs.begin(), request.includeDirs.end());
    return dirs;
}

// "could not open source file" / "cannot open source file": a header NVRTC cannot see, e.g. a
// quoted include that itself includes <cstdint>.
const Diagnostic* missingIncludeError(const KernelCheckResult& result) {
    for (const Diagnostic& d : result.diagnostics)
        if (d.severity == Severity::Error &&
            d.message.find("open source file") != std::string::npos)
            return &d;
    return nullptr;
}

void checkWithNvrtc(const KernelCheckRequest& request, const std::string& arch,
                    KernelCheckResult& result, std::stop_token stop) {
    // NVRTC sees the bare file name, which is mapped back to the workspace path afterwards.
    const std::string shownName = fs::path(request.path).filename().string();
    NvrtcRequest nvrtc;
    nvrtc.source = request.text;
    nvrtc.fileName = shownName.empty() ? "kernel.cu" : shownName;
    nvrtc.arch = arch;
    result.syntaxOnly = request.syntaxOnly;
    if (request.syntaxOnly)
        nvrtc.extraOptions = {"-fdevice-syntax-only"};
    else
        nvrtc.extraOptions = {"-Xptxas", "-v"};
    for (const auto& dir : sourceIncludeDirs(request))
        nvrtc.extraOptions.push_back("-I" + dir);
    for (const auto& dir : toolkit().includeDirs)
        nvrtc.extraOptions.push_back("-I" + dir);
    nvrtc.stop = stop;
    NvrtcResult compiled = compileWithNvrtc(nvrtc);
    result.cancelled = compiled.cancelled;
    result.success = compiled.success;
    result.log = compiled.log;
    result.diagnostics = compiled.diagnostics;
    renameDiagnosticFile(result.diagnostics, nvrtc.fileName, request.path);
    for (Diagnostic& d : result.diagnostics)
        if (d.file.empty())
            d.file = request.path; // ptxas's messages name no file
    if (request.syntaxOnly)
        return; // NVRTC hands out a PTX stub after a syntax-only run; it means nothing
    result.ptx = compiled.ptx;
    if (compiled.success)
        result.kernels = collectResourceUsage(compiled.log, compiled.ptx, arch);
    if (compiled.success && request.wantSass && !compiled.cubin.empty() && !stop.stop_requested()) {
        ScratchDirectory scratch("kwb-sass-");
        const fs::path cubin = fs::path(scratch.path()) / "kernel.cubin";
        std::ofstream(cubin, std::ios::binary) << compiled.cubin;
        result.sass = disassemble(cubin.string(), toolkit(), stop);
    }
}

void checkWithNvcc(const KernelCheckRequest& request, const std::string& arch,
                   KernelCheckResult& result, std::stop_token stop) {
    if (toolkit().nvcc.empty()) {
        result.diagnostics.push_back(
            {request.path, 0, 0, Severity::Error,
             "this file needs nvcc (" + result.pathReason +
                 "), and no CUDA toolkit with nvcc "
                 "was found (CUDA_HOME, " +
                 std::string(toolkit().root.empty() ? "PATH" : toolkit().root) + ")"});
        return;
    }
    ScratchDirectory scratch;
    if (!scratch.ok()) {
        result.diagnostics.push_back(
            {request.path, 0, 0, Severity::Error, "could not create a temporary folder for nvcc"});
        return;
    }
    std::string name = fs::path(request.path).filename().string();
    if (name.empty())
        name = "kernel.cu";
    const fs::path copy = fs::path(scratch.path()) / name;
    std::ofstream(copy, std::ios::binary) << request.text;

    NvccSingleFileRequest nvcc;
    nvcc.nvcc = toolkit().nvcc;
    nvcc.sourcePath = copy.string();
    nvcc.workDirectory = scratch.path();
    nvcc.arch = arch;
    nvcc.includeDirs = sourceIncludeDirs(request);
    NvccSingleFileOutput compiled = compileWithNvcc(nvcc, stop);
    if (compiled.process.cancelled || stop.stop_requested()) {
        result.cancelled = true;
        return;
    }
    result.log = compiled.log;
    result.diagnostics = parseCompilerLog(compiled.log);
    renameDiagnosticFile(result.diagnostics, copy.string(), request.path);
    renameDiagnosticFile(result.diagnostics, name, request.path);
    for (Diagnostic& d : result.diagnostics)
        if (d.file.empty())
            d.file = request.path; // ptxas and nvcc's own messages
    result.success = compiled.process.succeeded();
    if (!result.success && result.errorCount() == 0)
        result.diagnostics.push_back({request.path, 0, 0, Severity::Error,
                                      "nvcc failed (" + compiled.process.statusText() + ")"});
    result.ptx = compiled.ptx;
    if (result.success)
        result.kernels = collectResourceUsage(compiled.log, compiled.ptx, arch);
    if (result.success && request.wantSass && !stop.stop_requested())
        // The cubin suits both disassemblers; nvdisasm cannot read the host object.
        result.sass = disassemble(
            compiled.cubinPath.empty() ? compiled.objectPath : compiled.cubinPath, toolkit(), stop);
}

} // namespace

int KernelCheckResult::errorCount() const {
    return static_cast<int>(
        std::count_if(diagnostics.begin(), diagnostics.end(),
                      [](const Diagnostic& d) { return d.severity == Severity::Error; }));
}

std::string defaultKernelArch() {
    static const std::string arch = [] {
        const GpuInventory inventory = detectGpus();
        return inventory.hasGpu() ? inventory.devices.front().arch() : std::string("sm_90");
    }();
    return arch;
}

KernelCheckResult checkKernelSource(const KernelCheckRequest& request, std::stop_token stop) {
    const auto start = std::chrono::steady_clock::now();
    KernelCheckResult result;
    result.path = request.path;
    result.arch = request.arch.empty() ? defaultKernelArch() : request.arch;
    // Before any compiler reads a header: they read with kwb's rights, outside the sandbox.
    const fs::path file = request.path.empty() ? fs::path("kernel.cu") : fs::path(request.path);
    if (const auto problem = unsafeInclude(request.text, fs::absolute(file).parent_path(),
                                           includeRootFor(file), request.path)) {
        result.pathReason = "not compiled: " + problem->message;
        result.diagnostics.push_back(
            {problem->file, problem->line, 1, Severity::Error, problem->message});
        return result;
    }
    if (request.forcePath) {
        result.compilePath = *request.forcePath;
        result.pathReason = "chosen by the caller";
    } else {
        const CompilePathChoice choice = chooseCompilePath(request.text, toolkit().includeDirs);
        result.compilePath = choice.path;
        result.pathReason = choice.reason;
    }

    if (result.compilePath == CompilePath::Nvrtc) {
        checkWithNvrtc(request, result.arch, result, stop);
        const Diagnostic* missing = result.cancelled || result.success || request.forcePath
                                        ? nullptr
                                        : missingIncludeError(result);
        if (missing) {
            result.compilePath = CompilePath::Nvcc;
            result.syntaxOnly = false;
            result.pathReason = "NVRTC: " + formatDiagnostic(*missing) + "; retried with nvcc";
            result.diagnostics.clear();
            result.kernels.clear();
            result.ptx.clear();
            checkWithNvcc(request, result.arch, result, stop);
        }
    } else {
        checkWithNvcc(request, result.arch, result, stop);
    }
    result.compileMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
}

} // namespace kwb::diagnostics
