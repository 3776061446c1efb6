#pragma once

#include "agent/tools/shell/bash_tools.h"
#include "agent/tools/tool_registry.h"

namespace kwb::agent {

// The agent's whole tool set, in the order the model sees it: Bash, BashOutput, KillBash, Read,
// Write, Edit, MultiEdit, Glob, Grep, TodoWrite, Compile, Verify, Profile.
void addDefaultTools(ToolRegistry& registry, BashToolOptions bash = {});

} // namespace kwb::agent
