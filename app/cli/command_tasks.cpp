#include "commands.h"
#include "engine/screening/task_filter.h"
#include "engine/system/python_environment.h"
#include "engine/system/resource_paths.h"
#include "engine/system/user_directories.h"
#include "engine/workspace/task_catalog.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

namespace kwb::cli {
namespace {

struct FilterOptions {
    std::string path;
    std::string python;
    std::string out;
    std::size_t limit = 0;
    double memoryBudgetGiB = 0.0;
    bool noCompile = false;
    bool json = false;
    TaskFilterSettings settings;
};

nlohmann::json verdictJson(const TaskVerdict& v) {
    const TaskScreen& s = v.screen;
    return {{"id", v.id},
            {"kept", v.kept},
            {"skipped", v.skipped},
            {"reasons", v.reasons},
            {"from_cache", v.fromCache},
            {"eager_ms", s.eagerMs ? nlohmann::json(*s.eagerMs) : nlohmann::json(nullptr)},
            {"input_bytes", s.inputBytes ? nlohmann::json(*s.inputBytes) : nlohmann::json(nullptr)},
            {"step", s.step},
            {"error", s.error}};
}

void runFilter(const FilterOptions& o) {
    TaskSetOptions loadOptions;
    loadOptions.limit = o.limit;
    const TaskSetLoad loaded = loadTaskSet(o.path, loadOptions);
    if (!loaded.ok)
        failCommand("cannot read the task set: " + loaded.error);
    for (const std::string& problem : loaded.set.problems)
        std::cerr << "kwb: skipped " << problem << "\n";
    const PythonProbe python = locatePython(o.python);
    if (python.path.empty())
        failCommand("screening tasks needs the task Python: " + python.error);
    TaskFilterSettings settings = o.settings;
    settings.requireCompile = !o.noCompile;
    settings.memoryBudgetBytes = static_cast<std::uint64_t>(o.memoryBudgetGiB * (1ULL << 30));
    const TaskFilter filter(python.path, cacheDirectory());
    const TaskFilterReport report = filter.run(
        loaded.set, settings, [&](std::size_t done, std::size_t total, const TaskVerdict& v) {
            if (o.json)
                return;
            std::cout << "[" << done << "/" << total << "] " << v.id << ": "
                      << (v.kept      ? "screened"
                          : v.skipped ? "skipped"
                                      : "dropped")
                      << (v.fromCache ? " (cached)" : "");
            for (const std::string& reason : v.reasons)
                std::cout << "\n    " << reason;
            std::cout << std::endl;
        });
    if (!report.error.empty())
        failCommand("task filter: " + report.error);
    if (!o.json)
        // Near-duplicates are found once every task is screened: their verdicts come last.
        for (const TaskVerdict& v : report.verdicts)
            if (!v.kept && !v.skipped && !v.reasons.empty() &&
                (v.reasons.back().find("the same text as") != std::string::npos ||
                 v.reasons.back().find("near-duplicate") != std::string::npos))
                std::cout << v.id << ": dropped\n    " << v.reasons.back() << "\n";
    if (!o.out.empty()) {
        // The kept tasks as CUDA-Agent-Ops-6K rows: a task set `kwb rollout --tasks` reads.
        std::ofstream out(o.out);
        for (std::size_t i = 0; i < report.verdicts.size(); ++i) {
            if (!report.verdicts[i].kept)
                continue;
            const TaskSetEntry& task = loaded.set.tasks[i];
            out << nlohmann::json{{"code", task.source},
                                  {"ops", task.ops},
                                  {"data_source",
                                   task.dataSource.empty() ? task.id : task.dataSource},
                                  {"id", task.id}}
                       .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
        }
        if (!out)
            failCommand("cannot write " + o.out);
    }
    if (o.json) {
        nlohmann::json verdicts = nlohmann::json::array();
        for (const TaskVerdict& v : report.verdicts)
            verdicts.push_back(verdictJson(v));
        std::cout << nlohmann::json{{"tasks", loaded.set.tasks.size()},
                                    {"kept", report.kept},
                                    {"verdicts", verdicts}}
                         .dump(2)
                  << "\n";
    } else {
        std::cout << report.kept << " of " << loaded.set.tasks.size() << " task(s) kept"
                  << (o.out.empty() ? "" : ", written to " + o.out) << "\n";
    }
}

void addFilterCommand(CLI::App& tasks) {
    auto o = std::make_shared<FilterOptions>();
    auto* cmd = tasks.add_subcommand(
        "filter", "Screen a task set for training as CUDA Agent filtered Ops-6K: runs eager and "
                  "compiled, deterministic, outputs not constant and input-dependent, eager time "
                  "in a window, no near-duplicates; measurements cached per task");
    cmd->add_option("tasks", o->path,
                    "Task set: KernelBench checkout, folder of task files, or "
                    "Ops-6K JSON lines")
        ->required();
    cmd->add_option("--device", o->settings.device, "cpu or cuda")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    cmd->add_option("--limit", o->limit, "Screen only the first N tasks");
    cmd->add_option("--min-ms", o->settings.minEagerMs, "Drop tasks faster than this eager (ms)");
    cmd->add_option("--max-ms", o->settings.maxEagerMs, "Drop tasks slower than this eager (ms)");
    cmd->add_flag("--no-compile", o->noCompile, "Do not require torch.compile to run");
    cmd->add_option("--memory-budget", o->memoryBudgetGiB,
                    "Skip tasks whose inputs need more (GiB; default: a quarter of an "
                    "evaluation's memory budget, at most 4 GiB)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--max-similarity", o->settings.maxSimilarity,
                    "Normalized-AST similarity at which a task is a near-duplicate")
        ->check(CLI::Range(0.01, 1.0));
    cmd->add_option("--against", o->settings.decontaminateAgainst,
                    "A task set the kept tasks must not copy (e.g. a KernelBench checkout)");
    cmd->add_option("--python", o->python, "Task Python (default: auto-detect)");
    cmd->add_option("--out", o->out, "Write the kept tasks as Ops-6K JSON lines");
    cmd->add_flag("--json", o->json, "Print the verdicts as JSON");
    cmd->callback([o] { runFilter(*o); });
}

} // namespace

void addTasksCommand(CLI::App& app) {
    auto* cmd =
        app.add_subcommand("tasks", "List KernelBench-format tasks (the bundled ones by default)");
    auto directory = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("directory", *directory, "Folder of task .py files");
    cmd->add_flag("--json", *json, "Print JSON");
    addFilterCommand(*cmd);
    cmd->callback([cmd, directory, json] {
        if (!cmd->get_subcommands().empty())
            return; // `kwb tasks filter` ran instead
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
