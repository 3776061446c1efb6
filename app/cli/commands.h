#pragma once

namespace CLI {
class App;
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
void addAgentCommand(CLI::App& app);
void addEpisodesCommand(CLI::App& app);
void addRolloutCommands(CLI::App& app); // rollout, runs
void addNvrtcCommand(CLI::App& app);
void addServeCommand(CLI::App& app);

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

} // namespace kwb::cli
