#include "engine/system/user_directories.h"

#include <cstdlib>

namespace kwb {
namespace {
std::string variable(const char* name) {
    const char* value = std::getenv(name);
    return value && *value ? value : "";
}

// `override` when set; else `xdg` (the XDG base-directory variable, taken only when absolute, as
// the specification asks) with `underXdg` appended; else `underHome` below $HOME.
std::string resolve(const char* override, const char* xdg, const std::string& underXdg,
                    const std::string& underHome) {
    if (std::string value = variable(override); !value.empty())
        return value;
    if (std::string base = variable(xdg); !base.empty() && base.front() == '/')
        return base + "/" + underXdg;
    const std::string home = variable("HOME");
    return (home.empty() ? std::string("/tmp") : home) + "/" + underHome;
}
} // namespace

std::string cacheDirectory() {
    return resolve("KWB_CACHE_DIR", "XDG_CACHE_HOME", "kernel-workbench",
                   ".cache/kernel-workbench");
}

std::string stateDirectory() {
    return resolve("KWB_STATE_DIR", "XDG_DATA_HOME", "kernel-workbench/state",
                   ".local/share/kernel-workbench/state");
}

} // namespace kwb
