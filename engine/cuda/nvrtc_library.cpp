#include "engine/cuda/nvrtc_library.h"

#include "engine/cuda/dl_symbol.h"

#include <climits>
#include <cstdlib>
#include <cuda.h>
#include <dlfcn.h>
#include <filesystem>
#include <link.h>

namespace fs = std::filesystem;

namespace kwb {
namespace {

// Where the loader found the library (the soname alone says nothing about which copy).
std::string loadedPath(void* handle) {
    const link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
        return map->l_name;
    return {};
}

std::string lastDlError() {
    const char* why = dlerror();
    return why ? why : "unknown error";
}

} // namespace

std::string nvrtcSoname() {
    // NVRTC's soname carries the toolkit's major version; the entry points kept their ABI within
    // one major version.
    return "libnvrtc.so." + std::to_string(CUDA_VERSION / 1000);
}

bool NvrtcLibrary::resolveAll(void* handle) {
    std::string missing;
    resolveSymbol(handle, "nvrtcVersion", version, missing);
    resolveSymbol(handle, "nvrtcGetErrorString", getErrorString, missing);
    resolveSymbol(handle, "nvrtcCreateProgram", createProgram, missing);
    resolveSymbol(handle, "nvrtcDestroyProgram", destroyProgram, missing);
    resolveSymbol(handle, "nvrtcAddNameExpression", addNameExpression, missing);
    resolveSymbol(handle, "nvrtcSetFlowCallback", setFlowCallback, missing);
    resolveSymbol(handle, "nvrtcCompileProgram", compileProgram, missing);
    resolveSymbol(handle, "nvrtcGetProgramLogSize", getProgramLogSize, missing);
    resolveSymbol(handle, "nvrtcGetProgramLog", getProgramLog, missing);
    resolveSymbol(handle, "nvrtcGetPTXSize", getPTXSize, missing);
    resolveSymbol(handle, "nvrtcGetPTX", getPTX, missing);
    resolveSymbol(handle, "nvrtcGetCUBINSize", getCUBINSize, missing);
    resolveSymbol(handle, "nvrtcGetCUBIN", getCUBIN, missing);
    resolveSymbol(handle, "nvrtcGetLoweredName", getLoweredName, missing);
    if (missing.empty())
        return true;
    *this = NvrtcLibrary();
    loadError_ = "NVRTC at " + loadedPath(handle) + " lacks " + missing + " (older than CUDA " +
                 std::to_string(CUDA_VERSION / 1000) + "?)";
    return false;
}

NvrtcLibrary NvrtcLibrary::load(const std::vector<std::string>& toolkitRoots) {
    NvrtcLibrary library;
    std::vector<std::string> tries;
    const std::string soname = nvrtcSoname();
    if (const char* chosen = std::getenv("KWB_NVRTC_LIBRARY"); chosen && *chosen) {
        tries.emplace_back(chosen);
    } else {
        tries.push_back(soname);
        for (const std::string& root : toolkitRoots)
            for (const char* lib : {"lib64", "lib"})
                if (!root.empty())
                    tries.push_back((fs::path(root) / lib / soname).string());
    }
    std::string failures;
    for (const std::string& candidate : tries) {
        void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            failures += "\n  " + candidate + ": " + lastDlError();
            continue;
        }
        if (!library.resolveAll(handle))
            return library; // a wrong NVRTC is reported as such, not skipped
        library.loaded_ = true;
        library.path_ = loadedPath(handle);
        return library;
    }
    library.loadError_ = "NVRTC not found (install the CUDA toolkit, or set KWB_NVRTC_LIBRARY to " +
                         soname + "); tried:" + failures;
    return library;
}

} // namespace kwb
