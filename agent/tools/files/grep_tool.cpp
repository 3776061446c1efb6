#include "agent/tools/files/file_tools.h"
#include "agent/tools/files/glob_pattern.h"
#include "agent/tools/files/workspace_files.h"
#include "agent/tools/tool_arguments.h"
#include "engine/process/sandbox.h"
#include "engine/system/resource_paths.h"

#include <sstream>

using nlohmann::json;

namespace kwb::agent {
namespace {

constexpr std::size_t kFilesPerRun = 256;
constexpr std::size_t kMaxLineChars = 400;
// grep gets the pattern as one argument, and Linux refuses an argument over 128 kB (E2BIG); far
// below that, a pattern this long is no search a model means, so it is refused by name.
constexpr std::size_t kMaxPatternChars = 8192;

// GNU grep does the matching: it is fast, skips binary files, and its PCRE mode reads the
// patterns models write (\d, \w, lookarounds). std::regex recurses per character and overflows
// the stack on long lines. grep runs in the sandbox like every other process a tool starts.
ProcessResult runGrep(const std::vector<std::string>& flags, const std::string& pattern,
                      const std::vector<std::string>& files, const std::string& root) {
    std::vector<std::string> argv = {"grep", "--color=never", "-I", "-H", "-s"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"-e", pattern, "--"});
    argv.insert(argv.end(), files.begin(), files.end());
    SandboxPolicy policy;
    policy.readOnlyPaths = {root};
    policy.hiddenPaths = kwbOwnTrees();
    policy.limits.cpuSeconds = 60;
    policy.maxProcesses = 16;
    SandboxedCommand command = sandboxCommand(argv, root, policy);
    command.spec.timeout = std::chrono::seconds(60);
    command.spec.outputLimitBytes = 8 << 20;
    return runProcess(command.spec);
}

class GrepTool : public Tool {
public:
    explicit GrepTool(std::size_t defaultLimit)
        : defaultLimit_(defaultLimit),
          schema_(objectSchema(
              "Grep",
              "Searches file contents with a regular expression (Perl syntax, like grep -P). "
              "output_mode: \"files_with_matches\" (default) lists files, \"content\" shows "
              "matching lines as path:line:text, \"count\" gives matches per file. Binary files, "
              "build/, .git and __pycache__ are skipped.",
              {{"pattern", {{"type", "string"}, {"description", "the regular expression"}}},
               {"path",
                {{"type", "string"},
                 {"description", "file or folder to search (default: the workspace)"}}},
               {"glob",
                {{"type", "string"},
                 {"description",
                  "only files matching this glob, e.g. \"*.cu\" or \"kernels/**\""}}},
               {"output_mode",
                {{"type", "string"}, {"enum", {"content", "files_with_matches", "count"}}}},
               {"-i", {{"type", "boolean"}, {"description", "ignore case"}}},
               {"-n", {{"type", "boolean"}, {"description", "line numbers (always on)"}}},
               {"-A", {{"type", "integer"}, {"description", "lines of context after (content)"}}},
               {"-B", {{"type", "integer"}, {"description", "lines of context before (content)"}}},
               {"-C", {{"type", "integer"}, {"description", "lines of context around (content)"}}},
               {"head_limit",
                {{"type", "integer"}, {"description", "at most this many lines or files"}}}},
              {"pattern"})) {}

    const ToolSchema& schema() const override { return schema_; }

    ToolResult run(const json& args, ToolContext& context, std::stop_token stop) override {
        const std::string pattern = args["pattern"].get<std::string>();
        const std::string mode = args.value("output_mode", std::string("files_with_matches"));
        const std::int64_t limit =
            args.value("head_limit", static_cast<std::int64_t>(defaultLimit_));
        if (pattern.empty())
            return ToolResult::error("the pattern is empty");
        if (pattern.size() > kMaxPatternChars)
            return ToolResult::error("the pattern is " + std::to_string(pattern.size()) +
                                     " characters long; the limit is " +
                                     std::to_string(kMaxPatternChars));
        if (limit < 1)
            return ToolResult::error("head_limit must be at least 1");

        WorkspaceFiles listing =
            listWorkspaceFiles(context.workspace, args.value("path", std::string()), stop);
        if (!listing.error.empty())
            return ToolResult::error(listing.error);
        if (args.contains("glob")) {
            const GlobPattern glob(args["glob"].get<std::string>(), /*anyFolderWithoutSlash=*/true);
            if (!glob.valid())
                return ToolResult::error(glob.error());
            std::erase_if(listing.files, [&](const std::string& f) { return !glob.matches(f); });
        }

        std::vector<std::string> flags;
        if (args.value("-i", false))
            flags.push_back("-i");
        if (mode == "content") {
            flags.push_back("-n");
            for (const char* context : {"-A", "-B", "-C"})
                if (args.contains(context))
                    flags.push_back(std::string(context) +
                                    std::to_string(std::max<std::int64_t>(
                                        0, args[context].get<std::int64_t>())));
        } else {
            flags.push_back(mode == "count" ? "-c" : "-l");
        }

        std::vector<std::string> lines;
        bool perl = true;
        for (std::size_t first = 0; first < listing.files.size(); first += kFilesPerRun) {
            if (stop.stop_requested())
                return ToolResult::error("cancelled");
            const std::vector<std::string> chunk(
                listing.files.begin() + static_cast<std::ptrdiff_t>(first),
                listing.files.begin() + static_cast<std::ptrdiff_t>(
                                            std::min(listing.files.size(), first + kFilesPerRun)));
            std::vector<std::string> runFlags = flags;
            runFlags.push_back(perl ? "-P" : "-E");
            ProcessResult grep = runGrep(runFlags, pattern, chunk, listing.root);
            if (perl && (grep.err.text.find("Perl matching not supported") != std::string::npos ||
                         grep.err.text.find("-P option") != std::string::npos)) {
                perl = false; // a grep built without PCRE: extended syntax is the next best
                first -= kFilesPerRun;
                continue;
            }
            if (!grep.started)
                return ToolResult::error("cannot run grep: " + grep.startError);
            if (grep.timedOut)
                return ToolResult::error("the search took longer than 60 s; narrow path or glob");
            if (grep.exitedNormally && grep.exitCode == 2 && grep.out.text.empty())
                return ToolResult::error(
                    "grep: " + (grep.err.text.empty() ? grep.statusText() : grep.err.text));
            std::istringstream stream(grep.out.text);
            for (std::string line; std::getline(stream, line);) {
                if (mode == "count" && line.size() > 2 &&
                    line.compare(line.size() - 2, 2, ":0") == 0)
                    continue;
                if (line.size() > kMaxLineChars)
                    line = line.substr(0, kMaxLineChars) + " [... line cut]";
                lines.push_back(std::move(line));
            }
        }
        if (lines.empty())
            return ToolResult::success("no matches for " + pattern,
                                       {{"matches", json::array()}, {"total", 0}});
        std::string out;
        json shown = json::array();
        const auto cap = static_cast<std::size_t>(limit);
        for (std::size_t i = 0; i < lines.size() && i < cap; ++i) {
            out += lines[i] + "\n";
            shown.push_back(lines[i]);
        }
        if (lines.size() > cap)
            out +=
                "[" + std::to_string(lines.size() - cap) +
                " more lines not shown; narrow the pattern, path or glob, or raise head_limit]\n";
        return ToolResult::success(out, {{"matches", shown}, {"total", lines.size()}});
    }

private:
    std::size_t defaultLimit_;
    ToolSchema schema_;
};

} // namespace

std::unique_ptr<Tool> makeGrepTool(std::size_t defaultLimit) {
    return std::make_unique<GrepTool>(defaultLimit);
}

} // namespace kwb::agent
