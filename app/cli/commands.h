#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace CLI {
class App;
}
namespace kwb::agent {
class TrajectoryStore;
}

namespace kwb::cli {

// Each subcommand registers its options and its callback on the root app.
void addInfoCommand(CLI::App& app);
void addTasksCommand(CLI::App& app);
void addDoctorCommand(CLI::App& app);
void addWorkspaceCommand(CLI::App& app);
void addEvalCommand(CLI::App& app);
void addBaselineCommand(CLI::App& app);
void addTimelineCommand(CLI::App& app);
void addCountersCommand(CLI::App& app); // Nsight Compute output read back
void addAgentCommand(CLI::App& app);
void addEpisodesCommand(CLI::App& app);
void addRolloutCommands(CLI::App& app); // rollout, runs
void addNvrtcCommand(CLI::App& app);
void addServeCommand(CLI::App& app);
void addModelCommand(CLI::App& app);              // model info, tokenize, detokenize
void addTrainCommand(CLI::App& app);              // train tune, rft, grpo, value, ppo
void addEpisodeTrainingCommands(CLI::App* train); // train rft|grpo|value|ppo
// The options `kwb agent` and `kwb rollout` share: which provider (and a local model's device),
// and each reply's token limit and temperature.
void addProviderOptions(CLI::App* cmd, std::string& provider, std::string& modelDevice);
void addReplyOptions(CLI::App* cmd, std::optional<int>& maxTokens,
                     std::optional<double>& temperature);

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// The trajectory store every agent command reads and writes (command_episodes.cpp): `path`, or
// TrajectoryStore::defaultPath() when it is empty.
std::string storePathOr(const std::string& path);
// Opens it, or prints why not and ends the command with kExitFailure.
std::unique_ptr<agent::TrajectoryStore> openStoreOrExit(const std::string& path);
// Prints "kwb: <message>" and ends the command with kExitFailure.
[[noreturn]] void failCommand(const std::string& message);

// The value of a store call, or its error printed and the command ended (kExitFailure).
template <typename Result>
auto orFail(Result result) {
    if (!result)
        failCommand(result.error().message);
    return std::move(result).value();
}

} // namespace kwb::cli
