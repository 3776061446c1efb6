#include "engine/process/sandbox.h"
#include "engine/system/python_environment.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <thread>
#include <unistd.h>

using namespace kwb;
namespace fs = std::filesystem;

namespace {
// The test's Python may live below a folder the sandbox hides (a home folder): its installation
// is bound back, as the evaluator does.
ProcessResult runSandboxed(const std::string& script, SandboxPolicy policy,
                           const std::string& cwd = "/") {
    for (const auto& folder : pythonInstallFolders(KWB_TEST_EXPECTED_PYTHON))
        policy.readOnlyPaths.push_back(folder);
    SandboxedCommand command = sandboxCommand({"sh", "-c", script}, cwd, policy);
    command.spec.timeout = std::chrono::seconds(30);
    return runProcess(command.spec);
}
} // namespace

TEST(Sandbox, BubblewrapIsUsedWhenPresent) {
    if (!bubblewrapUsable())
        GTEST_SKIP() << "bubblewrap not usable on this machine";
    SandboxedCommand command = sandboxCommand({"true"}, "/", {});
    EXPECT_TRUE(command.isolated);
    EXPECT_TRUE(command.warning.empty());
    EXPECT_EQ(command.spec.argv.front(), bubblewrapPath());
}

TEST(Sandbox, BlocksNetworkAccess) {
    if (!bubblewrapUsable())
        GTEST_SKIP() << "bubblewrap not usable on this machine";
    // Inside a fresh network namespace only a down loopback exists: no route anywhere.
    ProcessResult r = runSandboxed("cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '", {});
    ASSERT_TRUE(r.succeeded()) << r.statusText() << r.err.text;
    EXPECT_EQ(r.out.text, "lo\n");
    ProcessResult python = runSandboxed(
        std::string(KWB_TEST_EXPECTED_PYTHON) +
            " -c \"import socket; s=socket.socket(); s.settimeout(2); s.connect(('1.1.1.1', 80))\"",
        {});
    EXPECT_FALSE(python.succeeded());
    EXPECT_NE(python.err.text.find("unreachable"), std::string::npos) << python.err.text;
}

TEST(Sandbox, AllowsWritesOnlyToListedPaths) {
    if (!bubblewrapUsable())
        GTEST_SKIP() << "bubblewrap not usable on this machine";
    const fs::path root = fs::temp_directory_path() / "kwb-sandbox-test";
    fs::remove_all(root);
    fs::create_directories(root / "workspace");
    fs::create_directories(root / "outside");
    SandboxPolicy policy;
    policy.writablePaths = {(root / "workspace").string()};
    ProcessResult inside = runSandboxed("echo ok > " + (root / "workspace" / "f").string(), policy);
    EXPECT_TRUE(inside.succeeded()) << inside.err.text;
    EXPECT_TRUE(fs::exists(root / "workspace" / "f"));
    ProcessResult outside = runSandboxed("echo bad > " + (root / "outside" / "f").string(), policy);
    EXPECT_FALSE(outside.succeeded());
    EXPECT_FALSE(fs::exists(root / "outside" / "f"));
    ProcessResult home = runSandboxed("touch $HOME/kwb-escape-test", policy);
    EXPECT_FALSE(home.succeeded());
    // /tmp is private: what the sandbox writes there never reaches the host's /tmp.
    ProcessResult tmp =
        runSandboxed("echo x > /tmp/kwb-private-tmp-test && cat /tmp/kwb-private-tmp-test", policy);
    EXPECT_TRUE(tmp.succeeded());
    EXPECT_FALSE(fs::exists("/tmp/kwb-private-tmp-test"));
    fs::remove_all(root);
}

TEST(Sandbox, HidesHomeFoldersHostSocketsAndPasswordHashes) {
    if (!bubblewrapUsable())
        GTEST_SKIP() << "bubblewrap not usable on this machine";
    // Not below /tmp (private in the sandbox anyway) nor /home or /root: only the HOME rule can
    // hide it.
    const fs::path root = fs::current_path() / "kwb-sandbox-hidden-test";
    fs::remove_all(root);
    fs::create_directories(root);
    // A stand-in for the user's home: whatever HOME names is hidden too.
    fs::create_directories(root / "home" / ".ssh");
    std::ofstream(root / "home" / ".ssh" / "id_ed25519") << "secret";
    const char* saved = std::getenv("HOME");
    const std::string savedHome = saved ? saved : "";
    setenv("HOME", (root / "home").c_str(), 1);
    SandboxPolicy policy;
    ProcessResult r = runSandboxed(
        "ls -A " + (root / "home").string() + "; ls -A /root /run 2>/dev/null", policy);
    ProcessResult shadow = runSandboxed("cat /etc/shadow", policy);
    if (saved)
        setenv("HOME", savedHome.c_str(), 1);
    else
        unsetenv("HOME");
    EXPECT_EQ(r.out.text.find(".ssh"), std::string::npos) << r.out.text;
    EXPECT_EQ(r.out.text.find("secret"), std::string::npos) << r.out.text;
    EXPECT_EQ(shadow.out.text, "") << "password hashes are visible";
    // Read-only as well as empty, and what a stage needs below a hidden folder is bound again.
    fs::create_directories(root / "home" / "project");
    policy.writablePaths = {(root / "home" / "project").string()};
    setenv("HOME", (root / "home").c_str(), 1);
    ProcessResult write =
        runSandboxed("touch " + (root / "home" / "x").string() + " || echo refused; echo ok > " +
                         (root / "home" / "project" / "f").string(),
                     policy);
    if (saved)
        setenv("HOME", savedHome.c_str(), 1);
    else
        unsetenv("HOME");
    EXPECT_NE(write.out.text.find("refused"), std::string::npos)
        << write.out.text << write.err.text;
    EXPECT_TRUE(fs::exists(root / "home" / "project" / "f"));
    EXPECT_FALSE(fs::exists(root / "home" / "x"));
    fs::remove_all(root);
}

TEST(Sandbox, PrivateTmpIsSizedAndTheRecordSaysWhichSandboxRan) {
    SandboxPolicy policy;
    policy.tmpBytes = 4ULL << 20;
    SandboxedCommand command = sandboxCommand({"true"}, "/", policy);
    if (!bubblewrapUsable()) {
        EXPECT_NE(command.description.find("resource limits only"), std::string::npos);
        GTEST_SKIP() << "bubblewrap not usable on this machine";
    }
    EXPECT_EQ(command.description, "bubblewrap (" + bubblewrapPath() + ")");
    // /tmp is memory: 16 MiB into a 4 MiB /tmp fails with "no space", the host keeps its memory.
    ProcessResult r = runSandboxed(
        "head -c 16777216 /dev/zero > /tmp/fill || echo full; du -k /tmp/fill", policy);
    EXPECT_NE(r.out.text.find("full"), std::string::npos) << r.out.text << r.err.text;
    EXPECT_LE(std::stoi(r.out.text.substr(r.out.text.find('\n') + 1)), 4096) << r.out.text;
}

// A writable folder under a hidden home folder makes bubblewrap create its parents there, owned
// by the stage's user: writable, in memory. The hiding tmpfs is sized, so they cannot be filled.
TEST(Sandbox, MountPointFoldersInHiddenHomesCannotBeFilled) {
    const char* home = std::getenv("HOME");
    if (!bubblewrapUsable() || !tmpfsSizeSupported() || !home || std::string(home) == "/")
        GTEST_SKIP() << "needs a bubblewrap that sizes tmpfs, and a home folder";
    const fs::path writable = fs::path(home) / ".cache" / "kwb-sandbox-test" / "inner";
    fs::create_directories(writable);
    SandboxPolicy policy;
    policy.writablePaths = {writable.string()};
    const std::string parent = writable.parent_path().string();
    ProcessResult r =
        runSandboxed("head -c 16777216 /dev/zero > '" + parent +
                         "/fill' 2>/dev/null || echo full; du -k '" + parent + "/fill' | cut -f1",
                     policy);
    std::error_code ec;
    fs::remove_all(writable.parent_path(), ec);
    EXPECT_NE(r.out.text.find("full"), std::string::npos) << r.out.text << r.err.text;
    EXPECT_LE(std::stoi(r.out.text.substr(r.out.text.find('\n') + 1)), 1024) << r.out.text;
    EXPECT_FALSE(fs::exists(writable.parent_path() / "fill")); // it never reached the host
}

// bubblewrap's --dev is a tmpfs sized at half the host's memory, /dev/shm a folder in it: pages
// written there belong to no process, so neither the memory budget nor the writable folders'
// disk budget would see them. /dev/shm is a tmpfs sized from the disk budget, /dev read-only.
TEST(Sandbox, DevShmIsSizedFromTheDiskBudgetAndDevIsReadOnly) {
    if (!bubblewrapUsable() || !tmpfsSizeSupported())
        GTEST_SKIP() << "needs a bubblewrap that sizes tmpfs";
    SandboxPolicy policy;
    policy.diskBytes = 64ULL << 20;
    EXPECT_EQ(sharedMemoryBytes(policy), 8ULL << 20);
    EXPECT_EQ(treeBudgetFor(policy).diskBytes, 56ULL << 20); // the share is part of the budget
    ProcessResult r = runSandboxed("head -c 16777216 /dev/zero > /dev/shm/fill 2>/dev/null || "
                                   "echo full; du -k /dev/shm/fill | cut -f1; "
                                   "touch /dev/fill 2>/dev/null || echo read-only",
                                   policy);
    EXPECT_NE(r.out.text.find("full"), std::string::npos) << r.out.text << r.err.text;
    EXPECT_NE(r.out.text.find("read-only"), std::string::npos) << r.out.text << r.err.text;
    const auto firstLine = r.out.text.find('\n');
    ASSERT_NE(firstLine, std::string::npos) << r.out.text;
    EXPECT_LE(std::stoi(r.out.text.substr(firstLine + 1)), 8192) << r.out.text;
    // Every command gets a fresh, empty /dev/shm: the next one is not starved by the last.
    ProcessResult next = runSandboxed(
        "ls -A /dev/shm; head -c 1048576 /dev/zero > /dev/shm/small && echo /dev/null ok > "
        "/dev/null && echo written",
        policy);
    EXPECT_TRUE(next.succeeded()) << next.statusText() << next.err.text;
    EXPECT_EQ(next.out.text, "written\n");
    // Without a disk budget the ceiling holds.
    EXPECT_EQ(sharedMemoryBytes(SandboxPolicy{}), 256ULL << 20);
}

// kwb's own trees (resources with the bundled solutions, the source tree) are hidden; what a
// stage needs in them is bound back, also when a bound folder above them would show them again.
TEST(Sandbox, HiddenFoldersShowOnlyWhatIsBoundBack) {
    if (!bubblewrapUsable())
        GTEST_SKIP() << "bubblewrap not usable on this machine";
    // Not below /tmp (private in the sandbox anyway): only hiddenPaths can hide it.
    const fs::path root = fs::current_path() / "kwb-sandbox-hidden-tree";
    fs::remove_all(root);
    const fs::path tree = root / "kwb";
    fs::create_directories(tree / "resources" / "harness");
    fs::create_directories(tree / "resources" / "solutions");
    std::ofstream(tree / "resources" / "harness" / "stage.py") << "harness";
    std::ofstream(tree / "resources" / "solutions" / "answer.cu") << "answer";
    SandboxPolicy policy;
    policy.hiddenPaths = {tree.string()};
    policy.readOnlyPaths = {(tree / "resources" / "harness").string()};
    const std::string script = "cat " + (tree / "resources/harness/stage.py").string() +
                               "; echo; cat " + (tree / "resources/solutions/answer.cu").string() +
                               " 2>/dev/null || echo hidden; ls -A " + tree.string();
    ProcessResult hidden = runSandboxed(script, policy);
    EXPECT_EQ(hidden.out.text, "harness\nhidden\nresources\n") << hidden.err.text;
    // A workspace above the tree, bound read-only, does not show it again.
    policy.readOnlyPaths.insert(policy.readOnlyPaths.begin(), root.string());
    ProcessResult again = runSandboxed(script, policy);
    EXPECT_EQ(again.out.text, "harness\nhidden\nresources\n") << again.err.text;
    fs::remove_all(root);
}

TEST(Sandbox, ProcessWatchdogStopsAForkStorm) {
    SandboxPolicy policy;
    policy.maxProcesses = 32;
    // A bounded storm (200 sleepers) stands in for a fork bomb without risking the host.
    ProcessResult r = runSandboxed("for i in $(seq 200); do sleep 20 & done; wait", policy);
    EXPECT_FALSE(r.succeeded());
    EXPECT_NE(r.limitExceeded.find("process limit"), std::string::npos) << r.statusText();
    EXPECT_LT(r.elapsed.count(), 15000);
}

TEST(Sandbox, FileSizeLimitStopsRunawayWrites) {
    const fs::path dir = fs::temp_directory_path() / "kwb-sandbox-fsize";
    fs::create_directories(dir);
    SandboxPolicy policy;
    policy.writablePaths = {dir.string()};
    policy.limits.fileSizeBytes = 1 << 20;
    ProcessResult r =
        runSandboxed("head -c 10000000 /dev/zero > " + (dir / "big").string(), policy);
    EXPECT_FALSE(r.succeeded());
    EXPECT_LE(fs::file_size(dir / "big"), 1u << 20);
    fs::remove_all(dir);
}

TEST(Sandbox, MemoryLimitTurnsExhaustionIntoAnError) {
    SandboxPolicy policy;
    policy.limits.addressSpaceBytes = 512ULL << 20;
    ProcessResult r = runSandboxed(
        std::string(KWB_TEST_EXPECTED_PYTHON) + " -S -c \"x = bytearray(2 << 30)\"", policy);
    EXPECT_FALSE(r.succeeded());
    EXPECT_NE(r.err.text.find("MemoryError"), std::string::npos) << r.err.text;
}

// The host's /tmp counts against a tree's disk budget only where the tree can write there: a
// flood into it without bubblewrap is the tree's; with bubblewrap the tree has a /tmp of its own,
// and new files in the host's are a neighbour's (a concurrent evaluation, torch's compile
// caches), which must not end this tree when the disk's free space shrinks.
TEST(Sandbox, TheHostTmpIsTheTreesOnlyWithoutIsolation) {
    const fs::path hostTmp = fs::temp_directory_path();
    const std::string fill =
        (hostTmp / ("kwb-sandbox-tmp-fill-" + std::to_string(::getpid()))).string();
    SandboxPolicy policy;
    policy.diskBytes = 64ULL << 20;

    setenv("KWB_SANDBOX", "rlimits-only", 1);
    const auto shared = treeBudgetFor(policy).sharedDiskPaths;
    EXPECT_NE(std::find(shared.begin(), shared.end(), hostTmp.string()), shared.end());
    // 512 MiB in 8 MiB pieces, each flushed so that the free space shrinks as it writes.
    ProcessResult flood = runSandboxed(
        "for i in $(seq 64); do head -c 8388608 /dev/zero > " + fill + ".$i; sync; done", policy);
    std::error_code ec;
    for (int i = 1; i <= 64; ++i)
        fs::remove(fill + "." + std::to_string(i), ec);
    EXPECT_NE(flood.limitExceeded.find("disk limit"), std::string::npos)
        << flood.statusText() << " " << flood.limitExceeded;
    unsetenv("KWB_SANDBOX");

    if (!bubblewrapUsable())
        GTEST_SKIP() << "bubblewrap not usable on this machine: no isolated tree to compare";
    const auto isolated = treeBudgetFor(policy).sharedDiskPaths;
    EXPECT_EQ(std::find(isolated.begin(), isolated.end(), hostTmp.string()), isolated.end());
    // A neighbour fills the host's /tmp while the isolated tree runs.
    std::thread neighbour([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const std::string piece(8 << 20, 'x');
        for (int i = 0; i < 32; ++i) { // 256 MiB
            std::ofstream out(fill + ".n" + std::to_string(i), std::ios::binary);
            out << piece;
            out.flush();
            ::sync();
        }
    });
    ProcessResult calm = runSandboxed("sleep 4", policy);
    neighbour.join();
    for (int i = 0; i < 32; ++i)
        fs::remove(fill + ".n" + std::to_string(i), ec);
    EXPECT_TRUE(calm.succeeded()) << calm.statusText() << " " << calm.limitExceeded;
}

// Every sandboxed child starts from an allow-list, with or without bubblewrap: credentials,
// HOME and injection hooks in kwb's environment never reach candidate code.
TEST(Sandbox, ChildrenSeeOnlyTheAllowedEnvironment) {
    setenv("KWB_TEST_PROVIDER_API_KEY", "sk-must-not-leak-1234", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "aws-must-not-leak-5678", 1);
    setenv("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock", 1);
    setenv("CUDA_INJECTION64_PATH", "/tmp/evil.so", 1);
    setenv("OPENBLAS_CORETYPE", "Haswell", 1); // a quirk some machines need: passes
    for (const char* mode : {"", "rlimits-only"}) {
        setenv("KWB_SANDBOX", mode, 1);
        ProcessResult r = runSandboxed("env", {});
        ASSERT_TRUE(r.succeeded()) << r.statusText() << r.err.text;
        const std::string env = "\n" + r.out.text;
        EXPECT_EQ(env.find("must-not-leak"), std::string::npos) << mode << "\n" << env;
        EXPECT_EQ(env.find("SSH_AUTH_SOCK"), std::string::npos) << mode << "\n" << env;
        EXPECT_EQ(env.find("CUDA_INJECTION64_PATH"), std::string::npos) << mode << "\n" << env;
        EXPECT_EQ(env.find("\nHOME="), std::string::npos) << mode << "\n" << env;
        EXPECT_NE(env.find("PATH="), std::string::npos) << mode << "\n" << env;
        EXPECT_NE(env.find("OPENBLAS_CORETYPE=Haswell"), std::string::npos) << mode << "\n" << env;
    }
    for (const char* name : {"KWB_TEST_PROVIDER_API_KEY", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK",
                             "CUDA_INJECTION64_PATH", "OPENBLAS_CORETYPE", "KWB_SANDBOX"})
        unsetenv(name);
}
