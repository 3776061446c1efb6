#pragma once

#include <string>

namespace kwb {

// Where the engine keeps data between runs. Both are per user and shared by every clone and
// every front end, so a rebuilt extension or a timed baseline is never paid for twice.
//   cache: $KWB_CACHE_DIR or ~/.cache/kernel-workbench (extensions, baselines, scratch)
//   state: $KWB_STATE_DIR or ~/.local/share/kernel-workbench/state (workspace manifests)
std::string cacheDirectory();
std::string stateDirectory();

} // namespace kwb
