#include "engine/system/user_directories.h"

#include <cstdlib>

namespace kwb {
namespace {
std::string fromEnvironmentOr(const char* variable, const std::string& fallbackUnderHome) {
    if (const char* value = std::getenv(variable); value && *value)
        return value;
    const char* home = std::getenv("HOME");
    return std::string(home && *home ? home : "/tmp") + "/" + fallbackUnderHome;
}
} // namespace

std::string cacheDirectory() {
    return fromEnvironmentOr("KWB_CACHE_DIR", ".cache/kernel-workbench");
}

std::string stateDirectory() {
    return fromEnvironmentOr("KWB_STATE_DIR", ".local/share/kernel-workbench/state");
}

} // namespace kwb
