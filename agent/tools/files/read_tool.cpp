#include "agent/tools/files/file_tools.h"
#include "agent/tools/files/line_view.h"
#include "agent/tools/files/text_files.h"
#include "agent/tools/files/workspace_paths.h"
#include "agent/tools/tool_arguments.h"

using nlohmann::json;

namespace kwb::agent {
namespace {

constexpr std::int64_t kDefaultLimit = 2000;

class ReadTool : public Tool {
public:
    ReadTool()
        : schema_(objectSchema(
              "Read",
              "Reads a text file of the workspace and shows it like `cat -n` (line number, tab, "
              "line). Reads up to 2000 lines from the start unless offset / limit say otherwise; "
              "lines over 2000 characters are cut. Paths are relative to the workspace.",
              {{"file_path",
                {{"type", "string"}, {"description", "the file, relative to the workspace"}}},
               {"offset", {{"type", "integer"}, {"description", "first line to show (1-based)"}}},
               {"limit", {{"type", "integer"}, {"description", "how many lines to show"}}}},
              {"file_path"})) {}

    const ToolSchema& schema() const override { return schema_; }

    ToolResult run(const json& args, ToolContext& context, std::stop_token) override {
        const std::string path = args["file_path"].get<std::string>();
        const ResolvedPath resolved =
            resolveWorkspacePath(context.workspace, path, PathAccess::Read);
        if (!resolved.ok())
            return ToolResult::error(resolved.error);
        const FileText file = readWholeFile(resolved.absolute);
        if (!file.error.empty()) {
            const bool folder = file.error.find("folder") != std::string::npos;
            return ToolResult::error(resolved.relative + " " + file.error +
                                     (folder ? "; use Glob to list its files" : ""));
        }
        if (!file.text)
            return ToolResult::error(resolved.relative + " does not exist");
        const std::string& text = *file.text;
        if (looksBinary(text))
            return ToolResult::error(resolved.relative + " is a binary file (" +
                                     std::to_string(text.size()) + " bytes)");
        if (text.empty())
            return ToolResult::success("(" + resolved.relative + " is empty)");

        const auto lines = splitLines(text);
        const std::int64_t offset = args.value("offset", std::int64_t{1});
        const std::int64_t limit = args.value("limit", kDefaultLimit);
        if (offset < 1 || limit < 1)
            return ToolResult::error("offset and limit must be at least 1");
        if (static_cast<std::size_t>(offset) > lines.size())
            return ToolResult::error("offset " + std::to_string(offset) + " is past the end of " +
                                     resolved.relative + " (" + std::to_string(lines.size()) +
                                     " lines)");
        std::string out =
            numberedLines(lines, static_cast<std::size_t>(offset), static_cast<std::size_t>(limit));
        const std::size_t last =
            std::min(lines.size(), static_cast<std::size_t>(offset + limit - 1));
        if (offset > 1 || last < lines.size())
            out += "(lines " + std::to_string(offset) + "-" + std::to_string(last) + " of " +
                   std::to_string(lines.size()) +
                   (last < lines.size() ? "; use offset to read further)" : ")");
        return ToolResult::success(out);
    }

private:
    ToolSchema schema_;
};

} // namespace

std::unique_ptr<Tool> makeReadTool() {
    return std::make_unique<ReadTool>();
}

} // namespace kwb::agent
