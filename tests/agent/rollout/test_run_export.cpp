// The rejection fine-tuning export: a run's successful episodes only, without the ones that
// looped or made a malformed tool call, whether the runner marked that call or an older store
// holds only the registry's words for it.
#include "agent/rollout/run_export.h"
#include "agent/store/trajectory_store.h"
#include "tests/agent/rollout/run_store_fixture.h"

#include <gtest/gtest.h>
#include <set>
#include <sstream>

using namespace kwb::agent;
using nlohmann::json;

namespace {

class RunExportTest : public kwb::test::RunStoreTest {
protected:
    // One settled episode of the run: a prompt, a model turn with a tool call, the tool's
    // answer (its payload's extra fields from `toolResult`), the model's last word.
    EpisodeId episode(const std::string& task, double reward, json toolResult,
                      const std::string& status = {}) {
        EpisodeRecord record;
        record.task = "/data/kb/" + task + ".py";
        record.settings = {{"run_id", run_}, {"run_task", task}, {"run_sample", 0}};
        auto created = store_->createEpisode(record);
        EXPECT_TRUE(created.ok());
        const EpisodeId id = created.value().id;
        append(id, EventKind::SystemPrompt, {{"role", "system"}, {"text", "You write kernels."}});
        append(id, EventKind::UserMessage, {{"role", "user"}, {"text", "Make " + task + " fast."}});
        append(id, EventKind::AssistantMessage,
               {{"role", "assistant"},
                {"text", ""},
                {"tool_calls", {{{"id", "c1"}, {"name", "Read"}, {"arguments", "{}"}}}}});
        json tool = {{"role", "tool"}, {"tool_call_id", "c1"}, {"tool", "Read"}};
        for (const auto& [key, value] : toolResult.items())
            tool[key] = value;
        append(id, EventKind::ToolResult, tool);
        if (!status.empty())
            append(id, EventKind::Status, {{"message", status}});
        append(id, EventKind::AssistantMessage, {{"role", "assistant"}, {"text", "Done."}});
        EpisodeOutcome outcome;
        outcome.status = EpisodeStatus::Finished;
        outcome.reward = reward;
        EXPECT_TRUE(store_->finishEpisode(id, outcome).ok());
        return id;
    }

    std::set<std::string> exportedTasks(RunExportFormat format) {
        std::ostringstream out;
        RunExportOptions options;
        options.format = format;
        auto rows = exportRun(*store_, run_, options, out);
        EXPECT_TRUE(rows.ok()) << rows.error().message;
        std::set<std::string> tasks;
        std::istringstream lines(out.str());
        for (std::string line; std::getline(lines, line);)
            tasks.insert(json::parse(line)["extra_info"]["task"].get<std::string>());
        EXPECT_EQ(rows.value(), tasks.size());
        return tasks;
    }
};

TEST_F(RunExportTest, RejectionFineTuningKeepsOnlyCleanSuccessfulEpisodes) {
    const json fine = {{"text", "1: import torch"}, {"tool_error", false}};
    episode("clean", 2.0, fine);
    episode("failed_tool_is_fine", 1.0,
            {{"text", "Read: no_such_file.py does not exist"}, {"tool_error", true}});
    episode("low_reward", -1.0, fine);
    episode("looped", 3.0, fine, "stuck: the same Read call five times");
    episode("marked_invalid", 3.0,
            {{"text", "Read: missing required parameter 'file_path'"},
             {"tool_error", true},
             {"invalid_call", true}});
    // Stores written before the runner marked malformed calls: the registry's words alone.
    episode("old_not_json", 3.0,
            {{"text", "Read: the arguments are not valid JSON: {\"file_path\": "},
             {"tool_error", true}});
    episode("old_unknown_tool", 3.0,
            {{"text", "unknown tool 'Delete'; the tools are: Read, Write"}, {"tool_error", true}});

    EXPECT_EQ(exportedTasks(RunExportFormat::Rft),
              (std::set<std::string>{"clean", "failed_tool_is_fine"}));
    // The SFT export keeps every settled episode: only the RFT set is filtered.
    EXPECT_EQ(exportedTasks(RunExportFormat::VerlSft).size(), 7u);
}

} // namespace
