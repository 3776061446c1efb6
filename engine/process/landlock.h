#pragma once

namespace kwb {

// The kernel's Landlock ABI version (0: none, or switched off), asked once per process. A warm
// worker's stage child confines its writes with Landlock when one server serves several
// workspaces; the engine shares a server only where this is at least 1.
int landlockAbi();

} // namespace kwb
