// Bash, BashOutput and KillBash: one persistent shell in the workspace sandbox.
#include "agent/tools/shell/bash_tools.h"
#include "agent/tools/shell/shell_session.h"
#include "agent/tools/tool_registry.h"
#include "engine/process/sandbox.h"
#include "tests/test_files.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <sstream>
#include <thread>

using namespace kwb::agent;
using nlohmann::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using kwb::test::readText;
using kwb::test::writeText;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Whether any live process has `needle` in its command line.
bool processWithArgumentExists(const std::string& needle) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
        std::ifstream in(entry.path() / "cmdline");
        std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (contains(cmdline, needle))
            return true;
    }
    return false;
}

class ToolsBashTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::random_device device;
        root_ = fs::temp_directory_path() / ("kwb-bash-" + std::to_string(device()));
        ws_ = root_ / "ws";
        writeText(ws_ / "model.py", "class Model: pass\n");
        writeText(ws_ / "binding.cpp", "// fixed\n");
        writeText(ws_ / "utils" / "compile.py", "print('harness')\n");
        fs::create_directories(ws_ / "kernels");
        context_.workspace = ws_.string();
        context_.evaluation.device = kwb::DeviceChoice::Cpu;
        context_.python = KWB_TEST_EXPECTED_PYTHON;
        makeRegistry(30000);
    }
    void TearDown() override {
        registry_.reset();
        std::error_code ec;
        fs::remove_all(root_, ec);
    }

    void makeRegistry(std::size_t outputLimit) {
        registry_ = std::make_unique<ToolRegistry>(ToolRegistryOptions{outputLimit});
        for (auto& tool : makeBashTools())
            registry_->add(std::move(tool));
        // Without bubblewrap the session's first result starts with a warning; take it here.
        firstResult_ = bash("true");
    }

    ToolResult bash(const std::string& command, int timeoutMs = 20000) {
        return registry_->run("Bash", {{"command", command}, {"timeout", timeoutMs}}, context_);
    }

    bool isolated() { return firstResult_.data.value("sandboxed", false); }

    fs::path root_;
    fs::path ws_;
    ToolContext context_;
    std::unique_ptr<ToolRegistry> registry_;
    ToolResult firstResult_;
};

} // namespace

TEST_F(ToolsBashTest, DirectoryAndEnvironmentPersistBetweenCommands) {
    ToolResult first = bash("cd kernels && export KWB_FOO=bar && pwd");
    EXPECT_FALSE(first.isError) << first.text;
    EXPECT_TRUE(contains(first.text, (ws_ / "kernels").string())) << first.text;
    ToolResult second = bash("pwd; echo \"foo=$KWB_FOO\"");
    EXPECT_TRUE(contains(second.text, (ws_ / "kernels").string() + "\nfoo=bar\n")) << second.text;
    // Quotes, here-documents and backslashes reach the shell as written.
    ToolResult quoting = bash("cat <<'EOF'\na 'b' \"c\" \\d $HOME\nEOF");
    EXPECT_EQ(quoting.text, "a 'b' \"c\" \\d $HOME\n[exit code 0]");
}

TEST_F(ToolsBashTest, ExitCodesAndBrokenCommandsKeepTheSessionUsable) {
    ToolResult ok = bash("echo hi");
    EXPECT_EQ(ok.text, "hi\n[exit code 0]");
    EXPECT_EQ(ok.data["exit_code"], 0);
    ToolResult failed = bash("echo oops >&2; (exit 3)");
    EXPECT_FALSE(failed.isError); // a failing command is a result, not a tool error
    EXPECT_EQ(failed.data["exit_code"], 3);
    EXPECT_EQ(failed.text, "oops\n[exit code 3]");
    ToolResult noNewline = bash("printf abc");
    EXPECT_EQ(noNewline.text, "abc\n[exit code 0]");

    ToolResult syntax = bash("echo 'unterminated");
    EXPECT_NE(syntax.data["exit_code"], 0) << syntax.text;
    // stdin is /dev/null: a command that reads it cannot swallow the next one.
    ToolResult reader = bash("cat; read line; echo after-read");
    EXPECT_TRUE(contains(reader.text, "after-read")) << reader.text;

    bash("cd kernels");
    ToolResult exited = bash("echo bye; exit 5");
    EXPECT_FALSE(exited.isError); // the command ended the shell; that is its result
    EXPECT_EQ(exited.data["exit_code"], 5);
    EXPECT_TRUE(contains(exited.text, "bye")) << exited.text;
    EXPECT_TRUE(contains(exited.text, "the shell exited")) << exited.text;
    ToolResult fresh = bash("pwd");
    EXPECT_EQ(fresh.text, ws_.string() + "\n[exit code 0]");
}

TEST_F(ToolsBashTest, TimeoutInterruptsTheCommandAndTheSessionSurvives) {
    bash("export KWB_KEEP=kept; cd kernels");
    const auto start = std::chrono::steady_clock::now();
    // Timeouts leave room for a loaded CI machine: the sandboxed shell must get to "started".
    ToolResult slow = bash("echo started; sleep 30; echo never", 3000);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
    EXPECT_TRUE(slow.isError);
    EXPECT_TRUE(slow.data["timed_out"].get<bool>());
    EXPECT_TRUE(contains(slow.text, "started")) << slow.text;
    EXPECT_FALSE(contains(slow.text, "never")) << slow.text;
    EXPECT_EQ(
        slow.text.rfind("Bash: the command timed out after 3.0 s; output so far:\nstarted\n", 0),
        0u)
        << slow.text;
    EXPECT_TRUE(contains(slow.text, "still running")) << slow.text;
    ToolResult after = bash("echo $KWB_KEEP; pwd");
    EXPECT_EQ(after.text, "kept\n" + (ws_ / "kernels").string() + "\n[exit code 0]");

    // A loop in the shell itself ends too, and the rest of the command list does not run.
    ToolResult busy = bash("while :; do :; done; echo never", 3000);
    EXPECT_TRUE(busy.data["timed_out"].get<bool>());
    EXPECT_FALSE(contains(busy.text, "never")) << busy.text;
    EXPECT_EQ(busy.data["exit_code"], 130) << busy.text;
    EXPECT_EQ(bash("echo $KWB_KEEP").text, "kept\n[exit code 0]");

    // A shell that ignores the interrupt is restarted, and the result says so.
    ToolResult stubborn = bash("trap '' INT; while :; do :; done", 3000);
    EXPECT_TRUE(stubborn.data["timed_out"].get<bool>());
    EXPECT_TRUE(contains(stubborn.text, "restarted")) << stubborn.text;
    EXPECT_EQ(bash("echo alive $KWB_KEEP; pwd").text, "alive\n" + ws_.string() + "\n[exit code 0]");
}

TEST_F(ToolsBashTest, BackgroundJobsReportOutputAndCanBeKilled) {
    bash("export KWB_JOB_VAR=seven; cd kernels");
    ToolResult started = registry_->run(
        "Bash",
        {{"command", "echo \"var=$KWB_JOB_VAR dir=$(pwd)\"; for i in 1 2 3; do echo line$i; "
                     "sleep 0.2; done; exit 4"},
         {"run_in_background", true}},
        context_);
    ASSERT_FALSE(started.isError) << started.text;
    const std::string id = started.data["job_id"];
    EXPECT_EQ(id, "job-1");

    std::string output;
    ToolResult report;
    for (int i = 0; i < 100; ++i) {
        report = registry_->run("BashOutput", {{"job_id", id}}, context_);
        ASSERT_FALSE(report.isError) << report.text;
        const auto body = report.text.find('\n');
        if (!contains(report.text, "(no new output)"))
            output += report.text.substr(body + 1);
        if (!report.data["running"].get<bool>())
            break;
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_EQ(report.data["exit_code"], 4) << report.text;
    EXPECT_TRUE(contains(report.text, "exited with code 4")) << report.text;
    EXPECT_TRUE(contains(output, "var=seven dir=" + (ws_ / "kernels").string())) << output;
    EXPECT_TRUE(contains(output, "line1\nline2\nline3\n")) << output;
    ToolResult drained = registry_->run("BashOutput", {{"job_id", id}}, context_);
    EXPECT_TRUE(contains(drained.text, "(no new output)")) << drained.text;

    ToolResult sleeper = registry_->run(
        "Bash", {{"command", "echo sleeping; sleep 60"}, {"run_in_background", true}}, context_);
    const std::string sleeperId = sleeper.data["job_id"];
    // The shell stays free while the job runs.
    EXPECT_EQ(bash("echo free").text, "free\n[exit code 0]");
    ToolResult killed = registry_->run("KillBash", {{"job_id", sleeperId}}, context_);
    EXPECT_FALSE(killed.isError) << killed.text;
    EXPECT_FALSE(killed.data["running"].get<bool>());
    EXPECT_TRUE(contains(killed.text, "killed")) << killed.text;
    EXPECT_TRUE(registry_->run("KillBash", {{"job_id", "job-99"}}, context_).isError);
    EXPECT_TRUE(registry_->run("BashOutput", {{"job_id", "job-99"}}, context_).isError);
}

TEST_F(ToolsBashTest, LongOutputIsCutInTheMiddle) {
    makeRegistry(2000);
    ToolResult r = bash("seq 1 100000");
    EXPECT_TRUE(r.truncated);
    EXPECT_LE(r.text.size(), 2100u);
    EXPECT_EQ(r.text.rfind("1\n2\n3\n", 0), 0u) << r.text.substr(0, 50);
    EXPECT_TRUE(contains(r.text, "99999\n100000\n[exit code 0]")) << r.text;
    EXPECT_TRUE(contains(r.text, "bytes of output omitted")) << r.text;
    EXPECT_EQ(r.data["output_bytes"], 588895);
}

TEST_F(ToolsBashTest, TheSandboxHasNoNetworkAndOnlyTheWorkspaceIsWritable) {
    if (!isolated())
        GTEST_SKIP() << "bubblewrap is not usable here: the shell runs with rlimits only";
    ToolResult net = bash("python3 -c \"import socket; "
                          "socket.create_connection(('1.1.1.1', 53), timeout=2)\"");
    EXPECT_NE(net.data["exit_code"], 0) << net.text;
    EXPECT_TRUE(contains(net.text, "unreachable") || contains(net.text, "Network")) << net.text;
    ToolResult loopback = bash("python3 -c \"import socket; "
                               "socket.create_connection(('127.0.0.1', 22), timeout=2)\"");
    EXPECT_NE(loopback.data["exit_code"], 0) << loopback.text;

    const fs::path outside = root_ / "outside.txt";
    ToolResult escape = bash("echo x > " + outside.string() +
                             "; echo x > /usr/kwb-escape; "
                             "touch ~/kwb-escape; echo done");
    EXPECT_TRUE(contains(escape.text, "Read-only file system")) << escape.text;
    EXPECT_FALSE(fs::exists(outside)) << "the host /tmp is not the sandbox's /tmp";
    EXPECT_FALSE(fs::exists("/usr/kwb-escape"));
    ToolResult inside = bash("echo kernel > kernels/k.cu && cat kernels/k.cu");
    EXPECT_EQ(inside.text, "kernel\n[exit code 0]");
    EXPECT_EQ(readText(ws_ / "kernels" / "k.cu"), "kernel\n");
}

TEST_F(ToolsBashTest, ProtectedFilesAreReadOnlyInsideTheShell) {
    if (!isolated())
        GTEST_SKIP() << "bubblewrap is not usable here: the shell runs with rlimits only";
    ToolResult r = bash("echo hacked >> model.py; echo '// x' > binding.cpp; rm -f model.py; "
                        "touch utils/evil.py; rm utils/compile.py; cat model.py");
    EXPECT_TRUE(contains(r.text, "Read-only file system")) << r.text;
    EXPECT_TRUE(contains(r.text, "class Model: pass")) << r.text;
    EXPECT_EQ(readText(ws_ / "model.py"), "class Model: pass\n");
    EXPECT_EQ(readText(ws_ / "binding.cpp"), "// fixed\n");
    EXPECT_TRUE(fs::exists(ws_ / "utils" / "compile.py"));
    EXPECT_FALSE(fs::exists(ws_ / "utils" / "evil.py"));
}

TEST_F(ToolsBashTest, TheShellAndItsJobsDieWithTheirOwner) {
    bash("sleep 987651 &");
    registry_->run("Bash", {{"command", "sleep 987652"}, {"run_in_background", true}}, context_);
    EXPECT_TRUE(processWithArgumentExists("987651"));
    EXPECT_TRUE(processWithArgumentExists("987652"));
    registry_.reset();
    bool gone = false;
    for (int i = 0; i < 50 && !gone; ++i) {
        gone = !processWithArgumentExists("987651") && !processWithArgumentExists("987652");
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(gone);
}

// The agent's shell has the evaluations' tree budget: everything it starts together, watched from
// outside, so a runaway script cannot take the host's memory; the next command gets a new shell.
TEST_F(ToolsBashTest, TheShellsTreeHasAMemoryBudgetAndTheNextCommandWorks) {
    ShellSandboxOptions options;
    options.workspace = ws_.string();
    options.python = KWB_TEST_EXPECTED_PYTHON;
    options.memoryBytes = 256ULL << 20;
    ShellSession session(options);
    const auto hog = session.run("python3 -c 'import time; b = bytearray(1 << 30); "
                                 "b[::4096] = b\"x\" * (1 << 18); time.sleep(30)' & wait",
                                 std::chrono::seconds(25));
    EXPECT_FALSE(hog.timedOut) << hog.output;
    EXPECT_TRUE(contains(hog.note, "memory limit")) << hog.note << "\n" << hog.output;
    EXPECT_LT(hog.elapsed.count(), 15000);
    const auto next = session.run("echo still here", std::chrono::seconds(10));
    EXPECT_EQ(next.exitCode, 0) << next.note;
    EXPECT_TRUE(contains(next.output, "still here")) << next.output;
}

TEST_F(ToolsBashTest, SecretsFromTheHostEnvironmentDoNotReachTheShell) {
    setenv("KWB_TEST_SECRET_API_KEY", "sk-should-not-leak", 1);
    makeRegistry(30000);
    ToolResult r = bash("env");
    unsetenv("KWB_TEST_SECRET_API_KEY");
    EXPECT_FALSE(contains(r.text, "sk-should-not-leak")) << r.text;
    EXPECT_TRUE(contains(r.text, "PATH=")) << r.text;
}

TEST_F(ToolsBashTest, WithoutBubblewrapTheFirstResultWarns) {
    setenv("KWB_SANDBOX", "rlimits-only", 1);
    makeRegistry(30000);
    unsetenv("KWB_SANDBOX");
    EXPECT_FALSE(firstResult_.data["sandboxed"].get<bool>());
    EXPECT_TRUE(contains(firstResult_.text, "warning: bubblewrap is not available"))
        << firstResult_.text;
    ToolResult second = bash("echo once");
    EXPECT_EQ(second.text, "once\n[exit code 0]");
}
