#pragma once

#include "agent/tools/tool.h"

#include <cstddef>
#include <memory>

namespace kwb::agent {

// The file tools, named and shaped as OpenHands / CUDA Agent's agent knows them. Every path goes
// through resolveWorkspacePath: nothing outside the workspace, no writes to protected files.
std::unique_ptr<Tool> makeReadTool();      // Read: file_path, offset, limit; `cat -n` lines
std::unique_ptr<Tool> makeWriteTool();     // Write: file_path, content
std::unique_ptr<Tool> makeEditTool();      // Edit: exact string replace, unique unless replace_all
std::unique_ptr<Tool> makeMultiEditTool(); // MultiEdit: several edits of one file, all or none
std::unique_ptr<Tool> makeGlobTool(std::size_t maxResults = 200);
std::unique_ptr<Tool> makeGrepTool(std::size_t defaultLimit = 200);
std::unique_ptr<Tool> makeTodoWriteTool();

} // namespace kwb::agent
