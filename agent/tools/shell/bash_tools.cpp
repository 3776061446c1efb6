#include "agent/tools/shell/bash_tools.h"

#include "agent/tools/shell/background_jobs.h"
#include "agent/tools/shell/shell_session.h"
#include "agent/tools/tool_arguments.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>

using nlohmann::json;

namespace kwb::agent {
namespace {

std::string shellQuote(const std::string& text) {
    std::string quoted = "'";
    for (char c : text)
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

std::string seconds(std::chrono::milliseconds duration) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(duration.count()) / 1000.0);
    return text;
}

// What the three tools share: one shell for the workspace of the latest call, and the jobs.
struct BashState {
    explicit BashState(BashToolOptions o)
        : options(std::move(o)), jobs(options.maxBackgroundJobs) {}

    ShellSession& sessionFor(const ToolContext& context) {
        std::lock_guard lock(mutex);
        ShellSandboxOptions wanted = options.sandbox;
        wanted.workspace = context.workspace;
        wanted.python = context.python;
        wanted.allowGpu = context.evaluation.device != DeviceChoice::Cpu;
        if (!session || session->options().workspace != wanted.workspace ||
            session->options().python != wanted.python ||
            session->options().allowGpu != wanted.allowGpu) {
            session = std::make_unique<ShellSession>(wanted, options.sessionOutputBytes);
            warned = false;
        }
        return *session;
    }

    BashToolOptions options;
    std::mutex mutex;
    std::unique_ptr<ShellSession> session;
    bool warned = false;
    BackgroundJobs jobs;
};

class BashTool : public Tool {
public:
    explicit BashTool(std::shared_ptr<BashState> state) : state_(std::move(state)) {
        schema_ = objectSchema(
            "Bash",
            "Runs a bash command in a persistent shell session in the workspace: the working "
            "directory and exported variables carry over between calls. The shell is "
            "sandboxed: no network, only the workspace is writable, and model.py, binding* and "
            "utils/ are read-only. stdin is /dev/null. Output (stdout and stderr) is cut in the "
            "middle when long. Use run_in_background for long-running commands, then BashOutput "
            "and KillBash. The workspace's own commands work here too: `bash utils/compile.sh`, "
            "`python3 -m utils.verification`, `python3 -m utils.profiling`.",
            {{"command", {{"type", "string"}, {"description", "the command"}}},
             {"timeout",
              {{"type", "integer"},
               {"description", "milliseconds before the command is interrupted (default 120000, "
                               "at most 600000)"}}},
             {"description",
              {{"type", "string"}, {"description", "what the command does, in a few words"}}},
             {"run_in_background",
              {{"type", "boolean"},
               {"description", "start it as a background job and return its job_id at once"}}}},
            {"command"});
    }

    const ToolSchema& schema() const override { return schema_; }

    ToolResult run(const json& args, ToolContext& context, std::stop_token stop) override {
        const std::string command = args["command"].get<std::string>();
        if (command.find_first_not_of(" \t\n") == std::string::npos)
            return ToolResult::error("the command is empty");
        std::error_code ec;
        if (!std::filesystem::is_directory(context.workspace, ec))
            return ToolResult::error("the workspace " + context.workspace + " does not exist");
        ShellSession& session = state_->sessionFor(context);
        if (args.value("run_in_background", false))
            return startJob(session, command, context);

        const auto& o = state_->options;
        const auto timeout =
            std::clamp(std::chrono::milliseconds(args.value(
                           "timeout", static_cast<std::int64_t>(o.defaultTimeout.count()))),
                       std::chrono::milliseconds(1000), o.maxTimeout);
        ShellRunResult r = session.run(command, timeout, stop);

        // An error result is shown after "Bash: ", so its first line says what went wrong.
        std::string text;
        if (r.timedOut)
            text += "the command timed out after " + seconds(timeout) + "; output so far:\n";
        else if (r.cancelled)
            text += "the command was cancelled; output so far:\n";
        else if (!r.exitCode && r.output.empty())
            text += "the command did not run\n";
        if (!session.isolated() && !session.sandboxWarning().empty() && !state_->warned) {
            text += "[" + session.sandboxWarning() + "]\n";
            state_->warned = true;
        }
        text += r.output;
        if (!text.empty() && text.back() != '\n')
            text += '\n';
        if (!r.note.empty())
            text += "[" + r.note + "]\n";
        if (r.exitCode)
            text += "[exit code " + std::to_string(*r.exitCode) + "]";
        ToolResult result;
        result.text = std::move(text);
        result.isError = r.timedOut || r.cancelled || !r.exitCode;
        result.truncated = r.truncated;
        result.data = {{"exit_code", r.exitCode ? json(*r.exitCode) : json(nullptr)},
                       {"timed_out", r.timedOut},
                       {"cancelled", r.cancelled},
                       {"sandboxed", session.isolated()},
                       {"elapsed_ms", r.elapsed.count()},
                       {"output_bytes", r.totalBytes}};
        return result;
    }

private:
    ToolResult startJob(ShellSession& session, const std::string& command,
                        const ToolContext& context) {
        // The job starts where the session is, with its exported variables, in a sandbox of
        // its own (so the session stays free for other commands).
        const auto shellState = session.state();
        std::string script = shellState ? shellState->exports + "\n" : std::string();
        script += "cd " + shellQuote(shellState ? shellState->directory : context.workspace) +
                  " 2>/dev/null\n" + command + "\n";
        SandboxedShell shell = sandboxedBash(session.options(), {"-c", script});
        std::string error;
        const std::string id = state_->jobs.start(std::move(shell.spec), command, error);
        if (id.empty())
            return ToolResult::error("cannot start the job: " + error);
        return ToolResult::success("started background job " + id +
                                       "; read its output with BashOutput(job_id=\"" + id +
                                       "\"), stop it with KillBash(job_id=\"" + id + "\")",
                                   {{"job_id", id}});
    }

    std::shared_ptr<BashState> state_;
    ToolSchema schema_;
};

std::string describeJob(const JobReport& r) {
    std::string text = r.id + " (" + r.command.substr(0, 80) +
                       (r.command.size() > 80 ? "..." : "") + "): " + r.statusText() + "\n";
    text += r.newOutput.empty() ? "(no new output)\n" : r.newOutput;
    return text;
}

json jobData(const JobReport& r) {
    return {
        {"job_id", r.id},
        {"status", r.statusText()},
        {"running", r.running},
        {"exit_code", r.exit && r.exit->exitedNormally ? json(r.exit->exitCode) : json(nullptr)}};
}

class BashOutputTool : public Tool {
public:
    explicit BashOutputTool(std::shared_ptr<BashState> state) : state_(std::move(state)) {
        schema_ = objectSchema("BashOutput",
                               "Shows a background job's status and the output it printed since "
                               "the last BashOutput call.",
                               {{"job_id", {{"type", "string"}, {"description", "from Bash"}}}},
                               {"job_id"});
    }
    const ToolSchema& schema() const override { return schema_; }
    ToolResult run(const json& args, ToolContext&, std::stop_token) override {
        const std::string id = args["job_id"].get<std::string>();
        const JobReport r = state_->jobs.read(id);
        if (!r.found)
            return ToolResult::error("no background job '" + id + "'");
        ToolResult result = ToolResult::success(describeJob(r), jobData(r));
        result.truncated = r.omittedBytes > 0;
        return result;
    }

private:
    std::shared_ptr<BashState> state_;
    ToolSchema schema_;
};

class KillBashTool : public Tool {
public:
    explicit KillBashTool(std::shared_ptr<BashState> state) : state_(std::move(state)) {
        schema_ = objectSchema("KillBash", "Stops a background job and every process it started.",
                               {{"job_id", {{"type", "string"}, {"description", "from Bash"}}}},
                               {"job_id"});
    }
    const ToolSchema& schema() const override { return schema_; }
    ToolResult run(const json& args, ToolContext&, std::stop_token) override {
        const std::string id = args["job_id"].get<std::string>();
        const JobReport r = state_->jobs.kill(id);
        if (!r.found)
            return ToolResult::error("no background job '" + id + "'");
        return ToolResult::success(describeJob(r), jobData(r));
    }

private:
    std::shared_ptr<BashState> state_;
    ToolSchema schema_;
};

} // namespace

std::vector<std::unique_ptr<Tool>> makeBashTools(BashToolOptions options) {
    auto state = std::make_shared<BashState>(std::move(options));
    std::vector<std::unique_ptr<Tool>> tools;
    tools.push_back(std::make_unique<BashTool>(state));
    tools.push_back(std::make_unique<BashOutputTool>(state));
    tools.push_back(std::make_unique<KillBashTool>(state));
    return tools;
}

} // namespace kwb::agent
