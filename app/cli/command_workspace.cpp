#include "commands.h"
#include "engine/workspace/task_catalog.h"
#include "engine/workspace/workspace.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

namespace kwb::cli {

void addWorkspaceCommand(CLI::App& app) {
    auto* workspace =
        app.add_subcommand("workspace", "Create and check CUDA-Agent-compatible workspaces");
    workspace->require_subcommand(1);

    auto* init = workspace->add_subcommand(
        "init", "Create a workspace for a task: model.py, model_new.py, kernels/, utils/");
    auto task = std::make_shared<std::string>();
    auto directory = std::make_shared<std::string>();
    auto withSolution = std::make_shared<bool>(false);
    auto force = std::make_shared<bool>(false);
    auto fast = std::make_shared<bool>(false);
    init->add_option("task", *task, "KernelBench task file (model.py)")
        ->required()
        ->check(CLI::ExistingFile);
    init->add_option("directory", *directory, "Workspace folder to create")->required();
    init->add_flag("--with-solution", *withSolution,
                   "Start from the task's bundled reference solution");
    init->add_flag("--force", *force, "Overwrite a non-empty folder");
    init->add_flag("--fast", *fast,
                   "Fast-path flavour: device-only kernels/*.cu compiled by NVRTC, launched from "
                   "model_new.py through kwb_kernels (no torch-extension build)");
    init->callback([task, directory, withSolution, force, fast] {
        WorkspaceInitOptions options;
        options.overwrite = *force;
        options.fastPath = *fast;
        if (*withSolution) {
            TaskInfo info = readTaskInfo(*task);
            std::string solution = info.solutionDirectory;
            if (*fast && !solution.empty()) {
                // solutions/<id> -> solutions_fast/<id>
                const std::filesystem::path regular = solution;
                solution =
                    (regular.parent_path().parent_path() / "solutions_fast" / regular.filename())
                        .string();
                if (!std::filesystem::exists(std::filesystem::path(solution) / "model_new.py"))
                    solution.clear();
            }
            if (solution.empty()) {
                std::cerr << "kwb: " << *task << " has no bundled " << (*fast ? "fast-path " : "")
                          << "reference solution\n";
                throw CLI::RuntimeError(kExitUsage);
            }
            options.solutionDirectory = solution;
        }
        WorkspaceInitResult result = initWorkspace(*task, *directory, options);
        if (!result.ok) {
            std::cerr << "kwb: " << result.error << "\n";
            throw CLI::RuntimeError(kExitFailure);
        }
        std::cout << "workspace: " << result.directory << "\n"
                  << "protected (hashed, checked at every evaluation): "
                  << result.protectedFiles.size() << " files\n"
                  << "next: edit model_new.py and kernels/, then `kwb eval " << result.directory
                  << "`\n";
    });

    auto* check = workspace->add_subcommand(
        "check", "Check (and restore) the protected files of a workspace");
    auto checkDirectory = std::make_shared<std::string>();
    check->add_option("directory", *checkDirectory, "Workspace folder")
        ->required()
        ->check(CLI::ExistingDirectory);
    check->callback([checkDirectory] {
        ProtectedFilesCheck result = checkAndRestoreProtectedFiles(*checkDirectory);
        std::cout << result.describe() << "\n";
        if (!result.clean())
            throw CLI::RuntimeError(kExitFailure);
    });
}

} // namespace kwb::cli
