#include "engine/timeline/injection_library.h"

#include "engine/system/resource_paths.h"
#include "kwb/version.h"

#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;

namespace kwb::timeline {

std::string cuptiInjectionLibraryPath() {
    constexpr const char* kFileName = "libkwb_cupti_inject.so";
    std::error_code ec;
    if (const char* env = std::getenv("KWB_CUPTI_INJECTION"); env && *env)
        return fs::is_regular_file(env, ec) ? fs::absolute(env, ec).string() : std::string();
    if (const fs::path exe = currentExecutablePath(); !exe.empty()) {
        const fs::path installed =
            exe.parent_path().parent_path() / build::kPrivateLibDir / kFileName;
        if (fs::is_regular_file(installed, ec))
            return installed.string();
    }
#ifdef KWB_CUPTI_INJECT_BUILD_PATH
    if (fs::is_regular_file(KWB_CUPTI_INJECT_BUILD_PATH, ec))
        return KWB_CUPTI_INJECT_BUILD_PATH;
#endif
    return {};
}

std::map<std::string, std::string> timelineEnvironment(const std::string& injectionLibrary,
                                                       const std::string& recordPath) {
    return {{"CUDA_INJECTION64_PATH", injectionLibrary},
            {"NVTX_INJECTION64_PATH", injectionLibrary},
            {"KWB_TIMELINE_OUT", recordPath}};
}

} // namespace kwb::timeline
