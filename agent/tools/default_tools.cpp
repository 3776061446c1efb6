#include "agent/tools/default_tools.h"

#include "agent/tools/files/file_tools.h"
#include "agent/tools/workspace_tools.h"

namespace kwb::agent {

void addDefaultTools(ToolRegistry& registry, BashToolOptions bash) {
    for (auto& tool : makeBashTools(std::move(bash)))
        registry.add(std::move(tool));
    registry.add(makeReadTool());
    registry.add(makeWriteTool());
    registry.add(makeEditTool());
    registry.add(makeMultiEditTool());
    registry.add(makeGlobTool());
    registry.add(makeGrepTool());
    registry.add(makeTodoWriteTool());
    for (auto& tool : makeWorkspaceTools())
        registry.add(std::move(tool));
}

} // namespace kwb::agent
