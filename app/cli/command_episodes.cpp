#include "agent/store/episode_export.h"
#include "agent/store/trajectory_store.h"
#include "commands.h"
#include "episode_printer.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

namespace kwb::cli {

std::string storePathOr(const std::string& path) {
    return path.empty() ? agent::TrajectoryStore::defaultPath() : path;
}

void failCommand(const std::string& message) {
    std::cerr << "kwb: " << message << "\n";
    throw CLI::RuntimeError(kExitFailure);
}

std::unique_ptr<agent::TrajectoryStore> openStoreOrExit(const std::string& path) {
    return orFail(agent::TrajectoryStore::open(storePathOr(path)));
}

namespace {

std::unique_ptr<agent::TrajectoryStore> openStore(const std::string& path) {
    std::unique_ptr<agent::TrajectoryStore> store = openStoreOrExit(path);
    // A run killed halfway left its episode "running": it is shown as what it is.
    if (auto closed = store->closeAbandoned(); closed && !closed.value().empty())
        std::cerr << "kwb: closed " << closed.value().size()
                  << " episode(s) whose process ended while running them\n";
    return store;
}

} // namespace

void addEpisodesCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand("episodes", "List, show, export and import stored episodes");
    cmd->require_subcommand(1);
    auto store = std::make_shared<std::string>();
    cmd->add_option("--store", *store, "Trajectory store (default: the state folder)");

    auto* list = cmd->add_subcommand("list", "Episodes, newest first");
    auto limit = std::make_shared<int>(50);
    auto task = std::make_shared<std::string>();
    list->add_option("--limit", *limit, "At most this many (0: all)");
    list->add_option("--task", *task, "Only episodes of this task");
    list->callback([store, limit, task] {
        auto s = openStore(*store);
        agent::EpisodeFilter filter;
        filter.limit = *limit;
        if (!task->empty())
            filter.task = *task;
        for (const auto& e : orFail(s->listEpisodes(filter)))
            std::cout << e.id << "\t" << agent::episodeStatusName(e.status) << "\t"
                      << (e.reward ? std::to_string(static_cast<int>(*e.reward)) : "-") << "\t"
                      << e.turns << " turns\t" << terminalSafe(e.model) << "\t"
                      << terminalSafe(e.task) << "\t" << e.startedAt << "\n";
    });

    auto* metrics = cmd->add_subcommand(
        "metrics", "The rollout metrics (pass rate, speed-ups, fast_p, rewards, hack flags, "
                   "turns, tokens, cost) of the stored episodes, by KernelBench level");
    auto prefix = std::make_shared<std::string>();
    auto model = std::make_shared<std::string>();
    auto asJson = std::make_shared<bool>(false);
    metrics->add_option("--task-prefix", *prefix, "Only episodes whose task path starts so");
    metrics->add_option("--model", *model, "Only episodes of this model");
    metrics->add_flag("--json", *asJson, "One JSON object: {\"overall\", \"by_level\"}");
    metrics->callback([store, prefix, model, asJson] {
        auto s = openStore(*store);
        agent::EpisodeFilter all;
        all.limit = 0;
        std::vector<agent::EpisodeRecord> chosen;
        for (auto& e : orFail(s->listEpisodes(all)))
            if (e.task.starts_with(*prefix) && (model->empty() || e.model == *model))
                chosen.push_back(std::move(e));
        printMetricsOf(std::cout, chosen, *asJson);
    });

    auto* show = cmd->add_subcommand("show", "One episode and its events");
    auto id = std::make_shared<agent::EpisodeId>(0);
    show->add_option("id", *id, "Episode id")->required();
    show->callback([store, id] {
        auto s = openStore(*store);
        const agent::EpisodeTrajectory t = orFail(s->loadTrajectory(*id));
        printEpisodeSummary(std::cout, t.episode);
        for (const auto& event : t.events)
            printEvent(std::cout, event);
    });

    auto* exporting = cmd->add_subcommand("export", "Episodes to JSONL (for replay or training)");
    auto ids = std::make_shared<std::vector<agent::EpisodeId>>();
    auto out = std::make_shared<std::string>();
    exporting->add_option("ids", *ids, "Episode ids")->required();
    exporting->add_option("--out", *out, "Output file (default: standard output)");
    exporting->callback([store, ids, out] {
        auto s = openStore(*store);
        const std::size_t count =
            out->empty() ? orFail(agent::exportEpisodes(*s, *ids, std::cout))
                         : orFail(agent::exportEpisodes(*s, *ids, std::filesystem::path(*out)));
        std::cerr << "exported " << count << " episode(s)\n";
    });

    auto* importing = cmd->add_subcommand("import", "Episodes from a JSONL export");
    auto file = std::make_shared<std::string>();
    importing->add_option("file", *file, "JSONL file")->required()->check(CLI::ExistingFile);
    importing->callback([store, file] {
        auto s = openStore(*store);
        for (const auto& e : orFail(agent::importEpisodes(*s, std::filesystem::path(*file))))
            std::cout << "imported episode " << e.id << "\n";
    });
}

} // namespace kwb::cli
