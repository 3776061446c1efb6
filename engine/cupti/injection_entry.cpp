// The entry points of libkwb_cupti_inject.so. The CUDA driver calls InitializeInjection when a
// process with CUDA_INJECTION64_PATH set initialises CUDA; NVTX calls InitializeInjectionNvtx2
// when NVTX_INJECTION64_PATH names this library. Nothing here may throw into the host process.
#include "engine/cupti/injection_session.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cupti.h>
#include <dlfcn.h>
#include <exception>
#include <mutex>

namespace {

std::once_flag startOnce;

void finishAtExit() {
    try {
        kwb::cupti::InjectionSession::current().finish();
    } catch (...) {
    }
}

using NvtxGetExportTable = const void* (*)(std::uint32_t);
using NvtxInitialize = int (*)(NvtxGetExportTable);

// libcupti's own NVTX entry, from the very copy of libcupti this library is linked against (the
// one torch already loaded, by soname). Pointing NVTX_INJECTION64_PATH at libcupti's file
// instead could load a second copy whose markers would never reach our activity buffers.
NvtxInitialize cuptiNvtxEntry() {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&cuptiActivityFlushAll), &info) || !info.dli_fname)
        return nullptr;
    void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
        return nullptr;
    auto entry = reinterpret_cast<NvtxInitialize>(dlsym(handle, "InitializeInjectionNvtx2"));
    dlclose(handle); // RTLD_NOLOAD took a reference of its own; the library stays loaded
    return entry;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) int InitializeInjection(void) {
    try {
        std::call_once(startOnce, [] {
            kwb::cupti::InjectionSession::current().start();
            if (kwb::cupti::InjectionSession::current().active())
                std::atexit(finishAtExit);
        });
    } catch (const std::exception& e) {
        std::fprintf(stderr, "[kwb-cupti] initialisation failed: %s; running unprofiled\n",
                     e.what());
    } catch (...) {
        std::fprintf(stderr, "[kwb-cupti] initialisation failed; running unprofiled\n");
    }
    return 1;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTable table) {
    NvtxInitialize entry = cuptiNvtxEntry();
    if (!entry) {
        std::fprintf(stderr, "[kwb-cupti] libcupti has no NVTX entry; NVTX ranges not recorded\n");
        return 0; // NVTX then turns its calls into no-ops
    }
    return entry(table);
}

// For hosts that leave through _exit (the harness does, to skip interpreter teardown): the
// final flush that atexit would have done.
__attribute__((visibility("default"))) int kwbCuptiFinish(void) {
    finishAtExit();
    return 0;
}

// Delivers the records completed so far without ending the recording.
__attribute__((visibility("default"))) int kwbCuptiFlush(void) {
    try {
        kwb::cupti::InjectionSession::current().flush(true);
    } catch (...) {
    }
    return 0;
}

} // extern "C"
