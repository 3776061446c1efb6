#include "agent/tools/shell/shell_sandbox.h"

#include "agent/tools/files/workspace_paths.h"
#include "engine/process/environment.h"
#include "engine/process/sandbox.h"
#include "engine/system/default_budgets.h"
#include "engine/system/python_environment.h"
#include "engine/system/resource_paths.h"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kwb::agent {
namespace {

std::string taskPython(const std::string& configured) {
    if (!configured.empty())
        return resolveFolderOf(configured);
    for (const auto& candidate : pythonCandidates(""))
        if (!candidate.path.empty() && access(candidate.path.c_str(), X_OK) == 0 &&
            candidate.path.find('/') != std::string::npos)
            return resolveFolderOf(candidate.path);
    return {};
}

} // namespace

SandboxedShell sandboxedBash(const ShellSandboxOptions& options,
                             const std::vector<std::string>& arguments) {
    std::error_code ec;
    const std::string workspace =
        fs::weakly_canonical(fs::absolute(options.workspace), ec).string();
    const std::string python = taskPython(options.python);

    SandboxPolicy policy;
    policy.writablePaths = {workspace};
    policy.readOnlyOverlays = protectedEntriesIn(workspace);
    // kwb's own trees (the bundled solutions, the adversarial suite) are not the agent's to read.
    policy.hiddenPaths = kwbOwnTrees();
    for (const auto& folder : pythonInstallFolders(python))
        policy.readOnlyPaths.push_back(folder);
    policy.allowGpu = options.allowGpu;
    policy.allowNetwork = false;
    policy.limits = options.limits;
    policy.maxProcesses = options.maxProcesses;
    policy.memoryBytes = options.memoryBytes ? options.memoryBytes : defaultMemoryBudget();
    policy.diskBytes = options.diskBytes ? options.diskBytes : defaultDiskBudget({workspace});

    std::vector<std::string> argv = {"bash", "--noprofile", "--norc"};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    SandboxedCommand command = sandboxCommand(argv, workspace, policy);

    SandboxedShell shell;
    shell.isolated = command.isolated;
    shell.warning = command.warning.empty()
                        ? ""
                        : "warning: bubblewrap is not available, so this shell runs with resource "
                          "limits only: no filesystem, network or process isolation, and the "
                          "protected files are not read-only here";
    shell.spec.argv = command.spec.argv;
    shell.spec.workingDirectory = command.spec.workingDirectory;
    shell.spec.limits = command.spec.limits;
    shell.spec.treeBudget = command.spec.treeBudget;
    shell.spec.environment = sandboxEnvironment();
    std::string path = shell.spec.environment.count("PATH") ? shell.spec.environment["PATH"]
                                                            : "/usr/local/bin:/usr/bin:/bin";
    if (!python.empty()) {
        path = fs::path(python).parent_path().string() + ":" + path;
        shell.spec.environment["KWB_PYTHON"] = python;
    }
    shell.spec.environment["PATH"] = path;
    shell.spec.environment["TERM"] = "dumb";
    shell.spec.environment["PAGER"] = "cat";
    shell.spec.environment["GIT_PAGER"] = "cat";
    shell.spec.environment["PYTHONUNBUFFERED"] = "1";
    shell.spec.environment["PYTHONDONTWRITEBYTECODE"] = "1";
    shell.spec.environment["HOME"] = command.isolated ? "/tmp" : workspace + "/.home";
    shell.spec.environment["TMPDIR"] =
        command.isolated ? "/tmp" : fs::temp_directory_path().string();
    if (!options.allowGpu)
        shell.spec.environment["CUDA_VISIBLE_DEVICES"] = "";
    return shell;
}

} // namespace kwb::agent
