#include "engine/diagnostics/demangle.h"

#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace kwb::diagnostics {

std::string demangleSymbol(const std::string& mangled) {
    if (mangled.rfind("_Z", 0) != 0)
        return mangled;
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> text(
        abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
    return status == 0 && text ? std::string(text.get()) : mangled;
}

} // namespace kwb::diagnostics
