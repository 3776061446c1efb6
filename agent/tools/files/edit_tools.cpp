#include "agent/tools/files/file_tools.h"
#include "agent/tools/files/line_view.h"
#include "agent/tools/files/text_edit.h"
#include "agent/tools/files/text_files.h"
#include "agent/tools/files/workspace_paths.h"
#include "agent/tools/tool_arguments.h"

#include <algorithm>

using nlohmann::json;

namespace kwb::agent {
namespace {

json editProperties() {
    return {{"old_string", {{"type", "string"}, {"description", "the exact text to replace"}}},
            {"new_string", {{"type", "string"}, {"description", "the text to put there"}}},
            {"replace_all",
             {{"type", "boolean"},
              {"description", "replace every occurrence (default: old_string must be unique)"}}}};
}

TextEdit editFrom(const json& args) {
    return {args["old_string"].get<std::string>(), args["new_string"].get<std::string>(),
            args.value("replace_all", false)};
}

// Reads, edits in memory, and writes once: a failed edit leaves the file as it was.
ToolResult editFile(const char* tool, const json& args, const std::vector<TextEdit>& edits,
                    ToolContext& context) {
    const std::string path = args["file_path"].get<std::string>();
    const ResolvedPath resolved = resolveWorkspacePath(context.workspace, path, PathAccess::Write);
    if (!resolved.ok())
        return ToolResult::error(resolved.error);
    const FileText file = readWholeFile(resolved.absolute);
    if (!file.error.empty())
        return ToolResult::error(resolved.relative + " " + file.error);
    if (!file.text)
        return ToolResult::error(resolved.relative + " does not exist; use Write to create it");
    if (edits.empty())
        return ToolResult::error("no edits given");

    std::string text = *file.text;
    std::size_t replacements = 0;
    std::size_t firstLine = 0;
    for (std::size_t i = 0; i < edits.size(); ++i) {
        const EditOutcome outcome = applyTextEdit(text, edits[i], resolved.relative);
        if (!outcome.error.empty()) {
            if (edits.size() == 1)
                return ToolResult::error(outcome.error);
            return ToolResult::error("edit " + std::to_string(i + 1) + " of " +
                                     std::to_string(edits.size()) + ": " + outcome.error +
                                     (i > 0 ? " (after the earlier edits were applied)" : "") +
                                     "; no edit was made");
        }
        replacements += outcome.replacements;
        firstLine =
            i == 0 ? outcome.firstChangedLine : std::min(firstLine, outcome.firstChangedLine);
    }
    if (std::string error = writeWholeFile(resolved.absolute, text); !error.empty())
        return ToolResult::error(resolved.relative + " " + error);
    context.reportChange({tool, resolved.relative, file.text, text});

    const auto lines = splitLines(text);
    const std::size_t from = firstLine > 4 ? firstLine - 4 : 1;
    std::string out = "edited " + resolved.relative + ": " + std::to_string(replacements) +
                      (replacements == 1 ? " replacement" : " replacements") +
                      ". The file around the first change:\n" + numberedLines(lines, from, 12, 400);
    return ToolResult::success(out, {{"path", resolved.relative}, {"replacements", replacements}});
}

class EditTool : public Tool {
public:
    EditTool() {
        json properties = editProperties();
        properties["file_path"] = {{"type", "string"},
                                   {"description", "the file, relative to the workspace"}};
        schema_ = objectSchema(
            "Edit",
            "Replaces exact text in a file. old_string must match the file exactly (whitespace "
            "included) and only once, unless replace_all is true. Read the file first.",
            properties, {"file_path", "old_string", "new_string"});
    }
    const ToolSchema& schema() const override { return schema_; }
    ToolResult run(const json& args, ToolContext& context, std::stop_token) override {
        return editFile("Edit", args, {editFrom(args)}, context);
    }

private:
    ToolSchema schema_;
};

class MultiEditTool : public Tool {
public:
    MultiEditTool() {
        json item = {{"type", "object"},
                     {"properties", editProperties()},
                     {"required", {"old_string", "new_string"}}};
        schema_ = objectSchema(
            "MultiEdit",
            "Makes several exact-text replacements in one file, in order, each on the result "
            "of the one before. Either all of them apply or none does.",
            {{"file_path",
              {{"type", "string"}, {"description", "the file, relative to the workspace"}}},
             {"edits",
              {{"type", "array"}, {"items", item}, {"description", "the edits, in order"}}}},
            {"file_path", "edits"});
    }
    const ToolSchema& schema() const override { return schema_; }
    ToolResult run(const json& args, ToolContext& context, std::stop_token) override {
        std::vector<TextEdit> edits;
        for (const auto& edit : args["edits"])
            edits.push_back(editFrom(edit));
        return editFile("MultiEdit", args, edits, context);
    }

private:
    ToolSchema schema_;
};

} // namespace

std::unique_ptr<Tool> makeEditTool() {
    return std::make_unique<EditTool>();
}

std::unique_ptr<Tool> makeMultiEditTool() {
    return std::make_unique<MultiEditTool>();
}

} // namespace kwb::agent
