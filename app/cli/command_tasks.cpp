#include "commands.h"
#include "engine/system/resource_paths.h"
#include "engine/workspace/task_catalog.h"

#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

namespace kwb::cli {

void addTasksCommand(CLI::App& app) {
    auto* cmd =
        app.add_subcommand("tasks", "List KernelBench-format tasks (the bundled ones by default)");
    auto directory = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("directory", *directory, "Folder of task .py files");
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([directory, json] {
        const std::string dir = directory->empty() ? bundledTasksDirectory() : *directory;
        std::vector<std::string> problems;
        std::vector<TaskInfo> tasks = listTasks(dir, &problems);
        if (*json) {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& t : tasks)
                out.push_back({{"id", t.id},
                               {"title", t.title},
                               {"category", t.category},
                               {"path", t.path},
                               {"solution", t.solutionDirectory}});
            std::cout << out.dump(2) << "\n";
        } else {
            for (const auto& t : tasks)
                std::cout << std::left << std::setw(26) << t.id << std::setw(14) << t.category
                          << (t.solutionDirectory.empty() ? "  " : "S ") << t.title << "\n";
            std::cout << tasks.size() << " task(s) in " << dir
                      << " (S: has a reference solution)\n";
        }
        for (const auto& problem : problems)
            std::cerr << "kwb: skipped " << problem << "\n";
        if (tasks.empty())
            throw CLI::RuntimeError(kExitFailure);
    });
}

} // namespace kwb::cli
