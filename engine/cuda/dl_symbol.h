#pragma once

#include <dlfcn.h>
#include <string>

namespace kwb {

// Points `target` at `symbol` of a dlopen'ed library, or adds the symbol's name to `missing`
// ("a, b"): the libraries loaded at run time (the driver, NVRTC) name every absent entry point
// at once instead of failing on the first.
template <typename Fn>
bool resolveSymbol(void* handle, const char* symbol, Fn& target, std::string& missing) {
    target = reinterpret_cast<Fn>(dlsym(handle, symbol));
    if (!target)
        missing += missing.empty() ? symbol : std::string(", ") + symbol;
    return target != nullptr;
}

} // namespace kwb
