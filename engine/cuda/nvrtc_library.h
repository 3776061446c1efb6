#pragma once

#include <nvrtc.h>
#include <string>
#include <vector>

namespace kwb {

// NVRTC, loaded with dlopen on first use instead of linked. A linked libnvrtc would stop kwb
// and the GUI from starting on a machine without the CUDA toolkit (the .deb recommends CUDA, it
// does not depend on it); loaded, such a machine gets "NVRTC not found" in the status bar and
// the diagnostics, and everything else keeps working.
class NvrtcLibrary {
public:
    // Looks for, in order: the file named by KWB_NVRTC_LIBRARY (nothing else when it is set),
    // libnvrtc.so.<the major version kwb was built with> through the loader's own search
    // (LD_LIBRARY_PATH, the ld.so cache), then lib64/ and lib/ of each of `toolkitRoots`.
    static NvrtcLibrary load(const std::vector<std::string>& toolkitRoots);

    bool loaded() const { return loaded_; }
    // Why it is not loaded: every place tried, and what the loader said.
    const std::string& loadError() const { return loadError_; }
    // The file loaded, as the loader resolved it.
    const std::string& path() const { return path_; }

    // Entry points; null when not loaded.
    nvrtcResult (*version)(int*, int*) = nullptr;
    const char* (*getErrorString)(nvrtcResult) = nullptr;
    nvrtcResult (*createProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                 const char* const*) = nullptr;
    nvrtcResult (*destroyProgram)(nvrtcProgram*) = nullptr;
    nvrtcResult (*addNameExpression)(nvrtcProgram, const char*) = nullptr;
    nvrtcResult (*setFlowCallback)(nvrtcProgram, int (*)(void*, void*), void*) = nullptr;
    nvrtcResult (*compileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
    nvrtcResult (*getProgramLogSize)(nvrtcProgram, size_t*) = nullptr;
    nvrtcResult (*getProgramLog)(nvrtcProgram, char*) = nullptr;
    nvrtcResult (*getPTXSize)(nvrtcProgram, size_t*) = nullptr;
    nvrtcResult (*getPTX)(nvrtcProgram, char*) = nullptr;
    nvrtcResult (*getCUBINSize)(nvrtcProgram, size_t*) = nullptr;
    nvrtcResult (*getCUBIN)(nvrtcProgram, char*) = nullptr;
    nvrtcResult (*getLoweredName)(nvrtcProgram, const char*, const char**) = nullptr;

private:
    bool resolveAll(void* handle);

    bool loaded_ = false;
    std::string loadError_;
    std::string path_;
};

// The soname kwb looks for, e.g. "libnvrtc.so.13".
std::string nvrtcSoname();

} // namespace kwb
