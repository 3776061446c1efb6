#include "engine/process/sandbox.h"

#include "engine/process/environment.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kwb {
namespace {

std::vector<std::string> nvidiaDeviceNodes() {
    std::vector<std::string> nodes;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/dev", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("nvidia", 0) == 0 && !entry.is_directory(ec))
            nodes.push_back(entry.path().string());
    }
    if (fs::exists("/dev/dri", ec))
        nodes.push_back("/dev/dri");
    return nodes;
}

// The size of the empty tmpfs that hides a home or socket folder.
constexpr std::uint64_t kHiddenFolderBytes = 1 << 20;

// The namespaces and mounts every sandbox starts from; the usability probe uses the same list,
// so "usable" means usable with exactly these options.
std::vector<std::string> isolationArguments(bool allowNetwork, std::uint64_t tmpBytes) {
    std::vector<std::string> args = {bubblewrapPath(),
                                     "--die-with-parent",
                                     "--new-session",
                                     "--unshare-pid",
                                     "--unshare-ipc",
                                     "--unshare-uts",
                                     "--cap-drop",
                                     "ALL",
                                     "--ro-bind",
                                     "/",
                                     "/",
                                     "--dev",
                                     "/dev",
                                     "--proc",
                                     "/proc"};
    // Memory-backed: sized, or a flood of /tmp would take the host's memory unseen. (--size
    // came with bubblewrap 0.7 and is refused by a setuid one: without it /tmp is unsized.)
    if (tmpBytes > 0 && tmpfsSizeSupported())
        args.insert(args.end(), {"--size", std::to_string(tmpBytes)});
    args.insert(args.end(), {"--tmpfs", "/tmp"});
    if (!allowNetwork)
        args.push_back("--unshare-net");
    // Empty and read-only in the sandbox: the users' home folders (keys, credentials, configs)
    // and the folders that hold the host's Unix sockets (a network namespace does not cover
    // sockets reached through the file system). What a stage needs from them is bound again on
    // top. (Mode 0555 holds for root too: every capability is dropped.) Sized small: the folders
    // bubblewrap creates in them as mount points belong to the stage's user, so a stage could
    // otherwise fill them, in memory, past every budget.
    std::error_code ec;
    const auto hide = [&](const std::string& folder) {
        args.insert(args.end(), {"--perms", "0555"});
        if (tmpfsSizeSupported())
            args.insert(args.end(), {"--size", std::to_string(kHiddenFolderBytes)});
        args.insert(args.end(), {"--tmpfs", folder});
    };
    const std::vector<std::string> hidden = {"/home", "/root", "/run", "/mnt", "/media", "/srv"};
    for (const auto& folder : hidden)
        if (fs::is_directory(folder, ec) && !fs::is_symlink(folder, ec))
            hide(folder);
    // Password hashes stay readable for root even with every capability dropped.
    for (const char* secret : {"/etc/shadow", "/etc/gshadow"})
        if (fs::is_regular_file(secret, ec))
            args.insert(args.end(), {"--ro-bind", "/dev/null", secret});
    // A home folder elsewhere (/var/lib/someone, /work/user) is hidden too.
    const char* home = std::getenv("HOME");
    const std::string homeFolder = home ? fs::weakly_canonical(home, ec).string() : "";
    const bool homeHidden =
        homeFolder.empty() || homeFolder == "/" ||
        std::any_of(hidden.begin(), hidden.end(), [&](const std::string& folder) {
            return homeFolder == folder || homeFolder.rfind(folder + "/", 0) == 0;
        });
    if (!homeHidden && fs::is_directory(homeFolder, ec))
        hide(homeFolder);
    return args;
}

} // namespace

bool tmpfsSizeSupported() {
    static std::once_flag once;
    static bool supported = false;
    std::call_once(once, [] {
        ProcessSpec probe;
        probe.argv = {bubblewrapPath(), "--ro-bind", "/",    "/",   "--size",
                      "1048576",        "--tmpfs",   "/tmp", "true"};
        probe.timeout = std::chrono::seconds(10);
        supported = !probe.argv.front().empty() && runProcess(probe).succeeded();
    });
    return supported;
}

std::string resolveFolderOf(const std::string& path) {
    if (path.find('/') == std::string::npos)
        return path;
    std::error_code ec;
    const fs::path p = fs::absolute(path, ec);
    const fs::path folder = fs::weakly_canonical(p.parent_path(), ec);
    return ec ? path : (folder / p.filename()).string();
}

std::string bubblewrapPath() {
    static const std::string path = [] {
        const char* chosen = std::getenv("KWB_BWRAP");
        if (chosen && *chosen)
            return access(chosen, X_OK) == 0 ? std::string(chosen) : std::string();
        std::string found = findExecutable("bwrap");
        if (!found.empty())
            return found;
        // A package for hosts without bubblewrap installs Debian's beside kwb.
        std::error_code ec;
        const fs::path self = fs::read_symlink("/proc/self/exe", ec);
        const fs::path bundled =
            self.parent_path().parent_path() / "libexec" / "kernel-workbench" / "bwrap";
        return !ec && access(bundled.c_str(), X_OK) == 0 ? bundled.string() : std::string();
    }();
    return path;
}

bool bubblewrapUsable() {
    static std::once_flag once;
    static bool usable = false;
    std::call_once(once, [] {
        if (bubblewrapPath().empty())
            return;
        ProcessSpec probe;
        probe.argv = isolationArguments(/*network=*/false, /*tmpBytes=*/0);
        probe.argv.insert(probe.argv.end(), {"--", "true"});
        probe.timeout = std::chrono::seconds(10);
        usable = runProcess(probe).succeeded();
    });
    return usable;
}

TreeBudget treeBudgetFor(const SandboxPolicy& policy) {
    TreeBudget budget{policy.maxProcesses, policy.memoryBytes, policy.diskBytes,
                      policy.writablePaths};
    std::error_code ec;
    const fs::path hostTmp = fs::temp_directory_path(ec);
    if (!ec)
        budget.diskPaths.push_back(hostTmp.string());
    return budget;
}

SandboxedCommand sandboxCommand(const std::vector<std::string>& argv,
                                const std::string& workingDirectory, const SandboxPolicy& policy) {
    SandboxedCommand command;
    command.spec.limits = policy.limits;
    command.spec.treeBudget = treeBudgetFor(policy);
    command.spec.workingDirectory = workingDirectory;
    // Never kwb's whole environment: keys and credentials must not reach candidate code.
    command.spec.inheritEnvironment = false;
    command.spec.environmentOverrides = sandboxEnvironment();
    // KWB_SANDBOX=rlimits-only lets a user (or a test) run without namespaces on purpose.
    const char* mode = std::getenv("KWB_SANDBOX");
    const bool namespacesOff = mode && std::string(mode) == "rlimits-only";
    if (namespacesOff || !bubblewrapUsable()) {
        command.spec.argv = argv;
        command.description = namespacesOff ? "resource limits only (KWB_SANDBOX=rlimits-only)"
                                            : "resource limits only (no usable bubblewrap)";
        command.warning =
            "sandbox: bubblewrap is not available, so the candidate ran with resource "
            "limits only: no filesystem, network or PID isolation";
        return command;
    }
    std::vector<std::string> wrapped = isolationArguments(policy.allowNetwork, policy.tmpBytes);
    for (const auto& path : policy.readOnlyPaths) {
        std::error_code ec;
        if (fs::exists(path, ec))
            wrapped.insert(wrapped.end(), {"--ro-bind", path, path});
    }
    for (const auto& path : policy.writablePaths) {
        std::error_code ec;
        fs::create_directories(path, ec);
        wrapped.insert(wrapped.end(), {"--bind", path, path});
    }
    for (const auto& path : policy.readOnlyOverlays) {
        std::error_code ec;
        if (fs::exists(path, ec))
            wrapped.insert(wrapped.end(), {"--ro-bind", path, path});
    }
    if (policy.allowGpu)
        for (const auto& node : nvidiaDeviceNodes())
            wrapped.insert(wrapped.end(), {"--dev-bind", node, node});
    if (!workingDirectory.empty())
        wrapped.insert(wrapped.end(), {"--chdir", workingDirectory});
    wrapped.push_back("--");
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    command.spec.argv = std::move(wrapped);
    command.spec.workingDirectory.clear(); // bwrap changes directory inside the sandbox
    command.isolated = true;
    command.description = "bubblewrap (" + bubblewrapPath() + ")";
    return command;
}

} // namespace kwb
