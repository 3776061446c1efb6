#include "engine/process/sandbox.h"

#include "engine/process/environment.h"
#include "engine/process/folder_containment.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
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

constexpr std::uint64_t kSharedMemoryCeiling = 256ULL << 20;

// Empty and read-only in the sandbox. Sized small: the folders bubblewrap creates in it as mount
// points (for what is bound back) belong to the stage's user, so a stage could otherwise fill
// them, in memory, past every budget. (Mode 0555 holds for root too: every capability is
// dropped.)
void hideFolder(std::vector<std::string>& args, const std::string& folder) {
    args.insert(args.end(), {"--perms", "0555"});
    if (tmpfsSizeSupported())
        args.insert(args.end(), {"--size", std::to_string(kHiddenFolderBytes)});
    args.insert(args.end(), {"--tmpfs", folder});
}

// A memory-backed folder, sized where this bubblewrap can (--size came with 0.7 and is refused
// by a setuid one: without it the folder is unsized).
void privateTmpfs(std::vector<std::string>& args, const std::string& folder, std::uint64_t bytes) {
    if (bytes > 0 && tmpfsSizeSupported())
        args.insert(args.end(), {"--size", std::to_string(bytes)});
    args.insert(args.end(), {"--tmpfs", folder});
}

// Last, after every device node is bound in: bubblewrap's --dev is itself a writable tmpfs
// sized at half the host's memory, which would hold a flood no budget counts.
const std::vector<std::string> kSealDev = {"--remount-ro", "/dev"};

// The namespaces and mounts every sandbox starts from; the usability probe uses the same list,
// so "usable" means usable with exactly these options.
std::vector<std::string> isolationArguments(bool allowNetwork, std::uint64_t tmpBytes,
                                            std::uint64_t sharedMemoryBytes) {
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
    // Memory-backed: sized, or a flood of /tmp or /dev/shm would take the host's memory unseen
    // (their pages belong to no process). No /dev/mqueue: --dev mounts none.
    privateTmpfs(args, "/tmp", tmpBytes);
    privateTmpfs(args, "/dev/shm", sharedMemoryBytes);
    if (!allowNetwork)
        args.push_back("--unshare-net");
    // Hidden: the users' home folders (keys, credentials, configs) and the folders that hold the
    // host's Unix sockets (a network namespace does not cover sockets reached through the file
    // system). What a stage needs from them is bound again on top.
    std::error_code ec;
    const std::vector<std::string> hidden = {"/home", "/root", "/run", "/mnt", "/media", "/srv"};
    for (const auto& folder : hidden)
        if (fs::is_directory(folder, ec) && !fs::is_symlink(folder, ec))
            hideFolder(args, folder);
    // Password hashes stay readable for root even with every capability dropped.
    for (const char* secret : {"/etc/shadow", "/etc/gshadow"})
        if (fs::is_regular_file(secret, ec))
            args.insert(args.end(), {"--ro-bind", "/dev/null", secret});
    // A home folder elsewhere (/var/lib/someone, /work/user) is hidden too.
    const char* home = std::getenv("HOME");
    const std::string homeFolder = home ? fs::weakly_canonical(home, ec).string() : "";
    const bool homeHidden =
        homeFolder.empty() || homeFolder == "/" ||
        std::any_of(hidden.begin(), hidden.end(),
                    [&](const std::string& folder) { return isWithinFolder(homeFolder, folder); });
    if (!homeHidden && fs::is_directory(homeFolder, ec))
        hideFolder(args, homeFolder);
    return args;
}

std::string normalFolder(const std::string& path) {
    std::error_code ec;
    return (fs::absolute(path, ec).lexically_normal() / "").parent_path().string();
}

// Whether `inner` lies strictly inside `outer` (both normal, absolute).
bool strictlyInside(const std::string& inner, const std::string& outer) {
    return inner.size() > outer.size() && inner.rfind(outer, 0) == 0 &&
           (outer == "/" || inner[outer.size()] == '/');
}

struct Bind {
    const char* option; // --ro-bind or --bind
    std::string path;
};

// The policy's folders in mount order: read-only, writable, then the read-only overlays on top.
std::vector<Bind> bindsOf(const SandboxPolicy& policy) {
    std::vector<Bind> binds;
    std::error_code ec;
    for (const auto& path : policy.readOnlyPaths)
        if (fs::exists(path, ec))
            binds.push_back({"--ro-bind", path});
    for (const auto& path : policy.writablePaths) {
        fs::create_directories(path, ec);
        binds.push_back({"--bind", path});
    }
    for (const auto& path : policy.readOnlyOverlays)
        if (fs::exists(path, ec))
            binds.push_back({"--ro-bind", path});
    return binds;
}

// The hidden folders, then the binds. A bound folder that holds a hidden one (a workspace or a
// candidate's folder above kwb's source tree) would show it again: it is hidden again after the
// binds, and what was bound inside it is bound again on top.
// The root's folders that hold the system (programs, libraries, configuration, add-on packages
// such as a toolkit or a conda in /opt) and the kernel's own; the rest (/work, /data, /srv,
// /workspace, other checkouts and datasets) is no stage's business: what a stage needs from
// there (its workspace, the task's Python, the harness) is bound back on top.
std::vector<std::string> nonSystemTopLevelFolders() {
    static const std::set<std::string> system = {"bin",   "boot",   "dev", "etc",  "lib",  "lib32",
                                                 "lib64", "libx32", "opt", "proc", "sbin", "sys",
                                                 "tmp",   "usr",    "var", "nix",  "snap", "gnu"};
    // Hidden already by isolationArguments, with the sockets and the homes.
    static const std::set<std::string> hiddenAlways = {"home", "root",  "run",
                                                       "mnt",  "media", "srv"};
    std::vector<std::string> folders;
    std::error_code ec;
    for (fs::directory_iterator it("/", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!system.count(name) && !hiddenAlways.count(name) && it->is_directory(ec) &&
            !it->is_symlink(ec))
            folders.push_back(it->path().string());
    }
    return folders;
}

void appendFolders(std::vector<std::string>& args, const SandboxPolicy& policy) {
    std::vector<std::string> hidden;
    std::error_code ec;
    std::vector<std::string> toHide = policy.hiddenPaths;
    const std::vector<std::string> outer = nonSystemTopLevelFolders();
    toHide.insert(toHide.end(), outer.begin(), outer.end());
    // The user's home may lie in one of them (/work/user): hidden by isolationArguments, then
    // covered by the outer folder's tmpfs, it is hidden again, read-only, inside it. (Anywhere
    // else isolationArguments' tmpfs is the one on top, and a second would only cost a mount.)
    if (const char* home = std::getenv("HOME")) {
        const std::string homeFolder = normalFolder(fs::weakly_canonical(home, ec).string());
        if (std::any_of(outer.begin(), outer.end(), [&](const std::string& folder) {
                return strictlyInside(homeFolder, normalFolder(folder));
            }))
            toHide.push_back(homeFolder);
    }
    // Outer folders first, so that a folder inside one is hidden on top of it.
    std::sort(toHide.begin(), toHide.end(), [](const std::string& a, const std::string& b) {
        return std::count(a.begin(), a.end(), '/') < std::count(b.begin(), b.end(), '/');
    });
    for (const auto& path : toHide)
        if (fs::is_directory(path, ec) && normalFolder(path) != "/" &&
            std::find(hidden.begin(), hidden.end(), normalFolder(path)) == hidden.end())
            hidden.push_back(normalFolder(path));
    for (const auto& folder : hidden)
        hideFolder(args, folder);
    const std::vector<Bind> binds = bindsOf(policy);
    for (const auto& bind : binds)
        args.insert(args.end(), {bind.option, bind.path, bind.path});
    for (const auto& folder : hidden) {
        const bool shownAgain = std::any_of(binds.begin(), binds.end(), [&](const Bind& bind) {
            return strictlyInside(folder, normalFolder(bind.path));
        });
        if (!shownAgain)
            continue;
        hideFolder(args, folder);
        for (const auto& bind : binds)
            if (strictlyInside(normalFolder(bind.path), folder))
                args.insert(args.end(), {bind.option, bind.path, bind.path});
    }
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
        probe.argv = isolationArguments(/*network=*/false, /*tmpBytes=*/0,
                                        /*sharedMemoryBytes=*/0);
        probe.argv.insert(probe.argv.end(), kSealDev.begin(), kSealDev.end());
        probe.argv.insert(probe.argv.end(), {"--", "true"});
        probe.timeout = std::chrono::seconds(10);
        usable = runProcess(probe).succeeded();
    });
    return usable;
}

std::uint64_t sharedMemoryBytes(const SandboxPolicy& policy) {
    return policy.diskBytes > 0 ? std::min(kSharedMemoryCeiling, policy.diskBytes / 8)
                                : kSharedMemoryCeiling;
}

TreeBudget treeBudgetFor(const SandboxPolicy& policy) {
    const std::uint64_t folders =
        policy.diskBytes > 0 ? policy.diskBytes - sharedMemoryBytes(policy) : 0;
    TreeBudget budget;
    budget.maxProcesses = policy.maxProcesses;
    budget.memoryBytes = policy.memoryBytes;
    budget.diskBytes = folders;
    budget.diskPaths = policy.writablePaths;
    // The host's /tmp is the tree's to fill only where no private, sized /tmp hides it (no
    // usable bubblewrap). Inside the sandbox, new files there are other processes' (concurrent
    // evaluations, torch's compile caches), and counting them blamed a stage for a neighbour's
    // writes whenever the disk's free space shrank past its budget.
    std::error_code ec;
    const fs::path hostTmp = fs::temp_directory_path(ec);
    if (!ec && !sandboxIsolates())
        budget.sharedDiskPaths.push_back(hostTmp.string());
    return budget;
}

bool sandboxIsolates() {
    // KWB_SANDBOX=rlimits-only lets a user (or a test) run without namespaces on purpose.
    const char* mode = std::getenv("KWB_SANDBOX");
    return !(mode && std::string(mode) == "rlimits-only") && bubblewrapUsable();
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
    if (!sandboxIsolates()) {
        const char* mode = std::getenv("KWB_SANDBOX");
        const bool namespacesOff = mode && std::string(mode) == "rlimits-only";
        command.spec.argv = argv;
        // The host's /dev/shm is writable then: what fills it counts against the disk budget.
        std::error_code ec;
        if (fs::is_directory("/dev/shm", ec))
            command.spec.treeBudget.sharedDiskPaths.push_back("/dev/shm");
        command.description = namespacesOff ? "resource limits only (KWB_SANDBOX=rlimits-only)"
                                            : "resource limits only (no usable bubblewrap)";
        command.warning =
            "sandbox: bubblewrap is not available, so the candidate ran with resource "
            "limits only: no filesystem, network or PID isolation";
        return command;
    }
    std::vector<std::string> wrapped =
        isolationArguments(policy.allowNetwork, policy.tmpBytes, sharedMemoryBytes(policy));
    appendFolders(wrapped, policy);
    if (policy.allowGpu)
        for (const auto& node : nvidiaDeviceNodes())
            wrapped.insert(wrapped.end(), {"--dev-bind", node, node});
    wrapped.insert(wrapped.end(), kSealDev.begin(), kSealDev.end());
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
