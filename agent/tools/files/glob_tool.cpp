#include "agent/tools/files/file_tools.h"
#include "agent/tools/files/glob_pattern.h"
#include "agent/tools/files/workspace_files.h"
#include "agent/tools/tool_arguments.h"

using nlohmann::json;

namespace kwb::agent {
namespace {

class GlobTool : public Tool {
public:
    explicit GlobTool(std::size_t maxResults)
        : maxResults_(maxResults),
          schema_(objectSchema(
              "Glob",
              "Lists workspace files whose path matches a glob such as \"**/*.cu\" or "
              "\"kernels/*.{cu,cpp}\" ('*' stays in one folder, '**' spans folders), sorted by "
              "path. build/, .git and __pycache__ are skipped unless `path` is inside them.",
              {{"pattern",
                {{"type", "string"},
                 {"description", "the glob, relative to `path` (default: the workspace)"}}},
               {"path", {{"type", "string"}, {"description", "folder to search in"}}}},
              {"pattern"})) {}

    const ToolSchema& schema() const override { return schema_; }

    ToolResult run(const json& args, ToolContext& context, std::stop_token stop) override {
        const std::string pattern = args["pattern"].get<std::string>();
        const std::string folder = args.value("path", std::string());
        // Checked first: the messages below quote the pattern.
        const GlobPattern glob(pattern);
        if (pattern.size() > GlobPattern::kMaxPatternChars)
            return ToolResult::error(glob.error());
        if (pattern.empty() || pattern[0] == '/' || pattern.rfind("..", 0) == 0)
            return ToolResult::error("the pattern is relative to the searched folder, e.g. "
                                     "\"**/*.cu\"; got \"" +
                                     pattern + "\"");
        if (!glob.valid())
            return ToolResult::error(glob.error());
        const WorkspaceFiles listing = listWorkspaceFiles(context.workspace, folder, stop);
        if (!listing.error.empty())
            return ToolResult::error(listing.error);
        // The pattern is relative to the searched folder; results are relative to the workspace.
        const std::string prefix = listing.folder == "." ? "" : listing.folder + "/";
        std::vector<std::string> matches;
        for (const auto& file : listing.files) {
            if (stop.stop_requested())
                return ToolResult::error("cancelled");
            if (file.rfind(prefix, 0) != 0)
                continue;
            if (glob.matches(std::string_view(file).substr(prefix.size())))
                matches.push_back(file);
        }
        if (matches.empty())
            return ToolResult::success("no files match " + pattern,
                                       {{"files", json::array()}, {"total", 0}});
        std::string out;
        json shown = json::array();
        for (std::size_t i = 0; i < matches.size() && i < maxResults_; ++i) {
            out += matches[i] + "\n";
            shown.push_back(matches[i]);
        }
        if (matches.size() > maxResults_)
            out += "[" + std::to_string(matches.size() - maxResults_) +
                   " more files not shown; use a narrower pattern or path]\n";
        return ToolResult::success(out, {{"files", shown}, {"total", matches.size()}});
    }

private:
    std::size_t maxResults_;
    ToolSchema schema_;
};

} // namespace

std::unique_ptr<Tool> makeGlobTool(std::size_t maxResults) {
    return std::make_unique<GlobTool>(maxResults);
}

} // namespace kwb::agent
