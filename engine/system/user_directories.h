#pragma once

#include <string>

namespace kwb {

// Where the engine keeps data between runs. Both are per user and shared by every clone and
// every front end, so a rebuilt extension or a timed baseline is never paid for twice.
//   cache: $KWB_CACHE_DIR, $XDG_CACHE_HOME/kernel-workbench or ~/.cache/kernel-workbench
//          (extensions, baselines, scratch)
//   state: $KWB_STATE_DIR, $XDG_DATA_HOME/kernel-workbench/state or
//          ~/.local/share/kernel-workbench/state (workspace manifests, the default store)
std::string cacheDirectory();
std::string stateDirectory();

} // namespace kwb
