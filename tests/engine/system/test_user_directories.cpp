// Where the engine keeps its cache and state: kwb's own variables first, then the XDG base
// directories (absolute ones only), then $HOME.
#include "engine/system/user_directories.h"

#include <cstdlib>
#include <gtest/gtest.h>
#include <map>
#include <optional>
#include <string>

using namespace kwb;

namespace {
// Sets variables for one test and puts back what was there.
class ScopedEnvironment {
public:
    void set(const std::string& name, const std::optional<std::string>& value) {
        if (!saved_.count(name)) {
            const char* old = std::getenv(name.c_str());
            saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
        }
        if (value)
            ::setenv(name.c_str(), value->c_str(), 1);
        else
            ::unsetenv(name.c_str());
    }
    ~ScopedEnvironment() {
        for (const auto& [name, value] : saved_)
            value ? ::setenv(name.c_str(), value->c_str(), 1) : ::unsetenv(name.c_str());
    }

private:
    std::map<std::string, std::optional<std::string>> saved_;
};
} // namespace

TEST(UserDirectories, KwbsVariablesThenXdgThenHome) {
    ScopedEnvironment env;
    env.set("HOME", "/home/u");
    env.set("KWB_CACHE_DIR", std::nullopt);
    env.set("KWB_STATE_DIR", std::nullopt);
    env.set("XDG_CACHE_HOME", std::nullopt);
    env.set("XDG_DATA_HOME", std::nullopt);
    EXPECT_EQ(cacheDirectory(), "/home/u/.cache/kernel-workbench");
    EXPECT_EQ(stateDirectory(), "/home/u/.local/share/kernel-workbench/state");

    env.set("XDG_CACHE_HOME", "/scratch/cache");
    env.set("XDG_DATA_HOME", "/scratch/data");
    EXPECT_EQ(cacheDirectory(), "/scratch/cache/kernel-workbench");
    EXPECT_EQ(stateDirectory(), "/scratch/data/kernel-workbench/state");

    // A relative XDG path is to be ignored, as the specification says.
    env.set("XDG_CACHE_HOME", "relative/cache");
    EXPECT_EQ(cacheDirectory(), "/home/u/.cache/kernel-workbench");

    env.set("KWB_CACHE_DIR", "/fast/kwb-cache");
    env.set("KWB_STATE_DIR", "/fast/kwb-state");
    EXPECT_EQ(cacheDirectory(), "/fast/kwb-cache");
    EXPECT_EQ(stateDirectory(), "/fast/kwb-state");
}
