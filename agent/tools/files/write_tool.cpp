#include "agent/tools/files/file_tools.h"
#include "agent/tools/files/line_view.h"
#include "agent/tools/files/text_files.h"
#include "agent/tools/files/workspace_paths.h"
#include "agent/tools/tool_arguments.h"

using nlohmann::json;

namespace kwb::agent {
namespace {

class WriteTool : public Tool {
public:
    WriteTool()
        : schema_(objectSchema(
              "Write",
              "Creates a file in the workspace, or replaces its whole content. Missing folders "
              "are created. model.py, binding*, and utils/ are read-only. Prefer Edit for "
              "changes to an existing file.",
              {{"file_path",
                {{"type", "string"}, {"description", "the file, relative to the workspace"}}},
               {"content", {{"type", "string"}, {"description", "the complete new content"}}}},
              {"file_path", "content"})) {}

    const ToolSchema& schema() const override { return schema_; }

    ToolResult run(const json& args, ToolContext& context, std::stop_token) override {
        const std::string path = args["file_path"].get<std::string>();
        const std::string content = args["content"].get<std::string>();
        const ResolvedPath resolved =
            resolveWorkspacePath(context.workspace, path, PathAccess::Write);
        if (!resolved.ok())
            return ToolResult::error(resolved.error);
        const FileText before = readWholeFile(resolved.absolute);
        if (!before.error.empty() && !before.text)
            return ToolResult::error(resolved.relative + " " + before.error);
        if (std::string error = writeWholeFile(resolved.absolute, content); !error.empty())
            return ToolResult::error(resolved.relative + " " + error);
        context.reportChange({"Write", resolved.relative, before.text, content});
        const std::size_t lines = splitLines(content).size();
        return ToolResult::success(std::string(before.text ? "overwrote " : "created ") +
                                       resolved.relative + " (" + std::to_string(lines) +
                                       " lines, " + std::to_string(content.size()) + " bytes)",
                                   {{"path", resolved.relative}, {"created", !before.text}});
    }

private:
    ToolSchema schema_;
};

} // namespace

std::unique_ptr<Tool> makeWriteTool() {
    return std::make_unique<WriteTool>();
}

} // namespace kwb::agent
