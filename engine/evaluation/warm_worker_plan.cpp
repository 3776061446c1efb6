#include "engine/evaluation/warm_worker_plan.h"

#include "engine/process/folder_containment.h"
#include "engine/process/landlock.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>

namespace fs = std::filesystem;

namespace kwb {
namespace {

bool sharingSwitchedOff() {
    const char* value = std::getenv("KWB_SHARED_WORKERS");
    return value && std::string(value) == "off";
}

std::optional<std::string> sharedRootOf(const std::string& path,
                                        const std::vector<std::string>& roots) {
    for (const auto& root : roots)
        // Both where they really are: a workspace reached through a link is bound there.
        if (isWithinFolder(resolvedPath(path), resolvedPath(root)))
            return root;
    return std::nullopt;
}

void addOnce(std::vector<std::string>& paths, const std::string& path) {
    if (std::find(paths.begin(), paths.end(), path) == paths.end())
        paths.push_back(path);
}

// The stage with every folder of this workspace replaced by the shared root holding it; nullopt
// when the workspace or its runs lie outside every root (the server would then be this
// workspace's anyway).
std::optional<HarnessStageSpec>
generalised(const HarnessStageSpec& spec, const std::string& scratchParent, std::string& runsRoot) {
    const auto workspaceRoot = sharedRootOf(spec.workingDirectory, spec.sharedRoots);
    const auto scratchRoot = sharedRootOf(scratchParent, spec.sharedRoots);
    if (!workspaceRoot || !scratchRoot)
        return std::nullopt;
    runsRoot = *scratchRoot;
    HarnessStageSpec server = spec;
    server.workingDirectory = *workspaceRoot;
    server.sandbox.writablePaths.clear();
    for (const auto& path : spec.sandbox.writablePaths)
        if (const std::string bound = sharedRootOf(path, spec.sharedRoots).value_or(path);
            bound != runsRoot) // harnessCommand binds that one
            addOnce(server.sandbox.writablePaths, bound);
    server.sandbox.readOnlyPaths.clear();
    for (const auto& path : spec.sandbox.readOnlyPaths) {
        const std::string bound = sharedRootOf(path, spec.sharedRoots).value_or(path);
        const auto& writable = server.sandbox.writablePaths;
        if (bound != runsRoot &&
            std::find(writable.begin(), writable.end(), bound) == writable.end())
            addOnce(server.sandbox.readOnlyPaths, bound);
    }
    return server;
}

} // namespace

const std::vector<std::string>& forkServerArguments() {
    // Requests and replies on descriptor 3 (LineProcess says why not stdin and stdout).
    static const std::vector<std::string> arguments = {"-m", "kwb_harness.fork_server",
                                                       "--channel-fd", "3"};
    return arguments;
}

WarmWorkerPlan planWarmWorker(const HarnessStageSpec& spec) {
    // Every evaluation of a workspace keeps its scratch folder in the same parent: the stage
    // child's HOME and, with its TMPDIR, what it may write besides the stage's own paths.
    const std::string scratchParent = fs::path(spec.scratchDirectory).parent_path().string();
    nlohmann::json environment = spec.workspaceEnvironment;
    environment["HOME"] = scratchParent;
    std::vector<std::string> writable = spec.sandbox.writablePaths;
    addOnce(writable, scratchParent);

    WarmWorkerPlan plan;
    plan.confinement = {{"cwd", spec.workingDirectory},
                        {"environment", environment},
                        {"writable", writable},
                        {"landlock", false}};
    if (!spec.sharedRoots.empty() && !sharingSwitchedOff() && landlockAbi() >= 1) {
        std::string runsRoot;
        if (auto server = generalised(spec, scratchParent, runsRoot)) {
            SandboxedCommand command = harnessCommand(*server, forkServerArguments(), runsRoot);
            // Without bubblewrap nothing binds folders and nothing would confine the server
            // either: keep each workspace's server to itself, as before.
            if (command.isolated) {
                plan.server = std::move(command);
                plan.shared = true;
                plan.confinement["landlock"] = true;
                return plan;
            }
        }
    }
    plan.server = harnessCommand(spec, forkServerArguments(), scratchParent);
    return plan;
}

} // namespace kwb
