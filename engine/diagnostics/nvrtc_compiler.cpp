#include "engine/diagnostics/nvrtc_compiler.h"

#include "engine/cuda/nvrtc_library.h"
#include "engine/diagnostics/compiler_log.h"
#include "engine/diagnostics/cuda_toolkit.h"
#include "kwb/version.h"

namespace kwb {
namespace {

// Loaded on first use: the located toolkit's and the build's toolkit's libraries are tried after
// the loader's own search.
const NvrtcLibrary& nvrtc() {
    static const NvrtcLibrary library = NvrtcLibrary::load(
        {diagnostics::locateCudaToolkit().root, std::string(build::kCudaToolkitRoot)});
    return library;
}

// Owns an nvrtcProgram for exactly one compile, so every early return releases it.
class Program {
public:
    explicit Program(nvrtcProgram program) : program_(program) {}
    ~Program() { nvrtc().destroyProgram(&program_); }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    nvrtcProgram get() const { return program_; }

private:
    nvrtcProgram program_;
};

std::string fetchLog(nvrtcProgram program) {
    size_t size = 0;
    nvrtc().getProgramLogSize(program, &size);
    std::string log(size, '\0');
    if (size > 0)
        nvrtc().getProgramLog(program, log.data());
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
        log.pop_back();
    return log;
}

// NVRTC calls this between its stages (front end, NVVM, ptxas); returning 1 cancels the compile.
int stopRequested(void* payload, void*) {
    return static_cast<const std::stop_token*>(payload)->stop_requested() ? 1 : 0;
}

} // namespace

std::vector<Diagnostic> parseNvrtcLog(const std::string& log) {
    return diagnostics::parseCompilerLog(log);
}

std::string nvrtcVersion() {
    int major = 0, minor = 0;
    if (!nvrtc().loaded())
        return "not found";
    if (nvrtc().version(&major, &minor) != NVRTC_SUCCESS)
        return "unknown";
    return std::to_string(major) + "." + std::to_string(minor);
}

bool nvrtcAvailable() {
    return nvrtc().loaded();
}

std::string nvrtcUnavailableReason() {
    return nvrtc().loadError();
}

std::string nvrtcLibraryPath() {
    return nvrtc().path();
}

NvrtcResult compileWithNvrtc(const NvrtcRequest& request) {
    NvrtcResult result;
    if (!nvrtc().loaded()) {
        result.log = nvrtc().loadError();
        result.diagnostics.push_back({request.fileName, 0, 0, Severity::Error, result.log});
        return result;
    }
    nvrtcProgram raw = nullptr;
    if (nvrtcResult rc = nvrtc().createProgram(&raw, request.source.c_str(),
                                               request.fileName.c_str(), 0, nullptr, nullptr);
        rc != NVRTC_SUCCESS) {
        result.log = std::string("nvrtcCreateProgram: ") + nvrtc().getErrorString(rc);
        return result;
    }
    Program program(raw);
    for (const auto& expression : request.nameExpressions)
        nvrtc().addNameExpression(program.get(), expression.c_str());
    if (request.stop.stop_possible())
        nvrtc().setFlowCallback(program.get(), stopRequested,
                                const_cast<std::stop_token*>(&request.stop));

    std::vector<std::string> options = {"--gpu-architecture=" + request.arch, "--std=c++17",
                                        "-default-device", "-lineinfo"};
    options.insert(options.end(), request.extraOptions.begin(), request.extraOptions.end());
    std::vector<const char*> optionPointers;
    for (const auto& option : options)
        optionPointers.push_back(option.c_str());

    nvrtcResult rc = nvrtc().compileProgram(program.get(), static_cast<int>(optionPointers.size()),
                                            optionPointers.data());
    result.log = fetchLog(program.get());
    if (rc == NVRTC_ERROR_CANCELLED) {
        result.cancelled = true;
        return result;
    }
    result.diagnostics = parseNvrtcLog(result.log);
    if (rc != NVRTC_SUCCESS) {
        if (result.diagnostics.empty())
            result.diagnostics.push_back({request.fileName, 0, 0, Severity::Error,
                                          std::string(nvrtc().getErrorString(rc)) +
                                              (result.log.empty() ? "" : ": " + result.log)});
        return result;
    }

    size_t ptxSize = 0;
    nvrtc().getPTXSize(program.get(), &ptxSize);
    result.ptx.resize(ptxSize);
    nvrtc().getPTX(program.get(), result.ptx.data());
    if (!result.ptx.empty() && result.ptx.back() == '\0')
        result.ptx.pop_back();

    if (request.arch.rfind("sm_", 0) == 0) {
        size_t cubinSize = 0;
        if (nvrtc().getCUBINSize(program.get(), &cubinSize) == NVRTC_SUCCESS && cubinSize > 0) {
            result.cubin.resize(cubinSize);
            nvrtc().getCUBIN(program.get(), result.cubin.data());
        }
    }
    for (const auto& expression : request.nameExpressions) {
        const char* lowered = nullptr;
        if (nvrtc().getLoweredName(program.get(), expression.c_str(), &lowered) == NVRTC_SUCCESS &&
            lowered)
            result.lowered.emplace_back(expression, lowered);
    }
    result.success = true;
    return result;
}

} // namespace kwb
