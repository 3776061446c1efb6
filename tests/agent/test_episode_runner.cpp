// The ReAct episode loop end to end: the scripted LLM server plays the model, the real tools act on
// a tiny pure-Python workspace, and the trajectory store keeps what happened.
#include "agent/session/episode_runner.h"
#include "agent/tools/files/file_tools.h"
#include "agent/tools/shell/bash_tools.h"
#include "agent/tools/workspace_tools.h"
#include "provider_test_support.h"
#include "tests/engine/evaluation_fixture.h"

#include <atomic>
#include <map>
#include <thread>

using namespace kwb;
using namespace kwb::test;
using namespace kwb::agent;
using namespace kwb::agent::test_support;
using nlohmann::json;

namespace {

const std::string kGoodForward = "        return x * self.weight * self.factor";

json toolTurn(const std::string& text, const std::string& id, const std::string& name,
              const json& arguments) {
    return {{"text", text},
            {"tool_calls", {{{"id", id}, {"name", name}, {"arguments", arguments}}}}};
}

json textTurn(const std::string& text) {
    return {{"text", text}};
}

json readSkill(const std::string& id) {
    return toolTurn("Reading.", id, "Read", {{"file_path", "SKILL.md"}});
}

// Calls a function on the first text delta of the episode (on the runner's thread).
class FirstDeltaSink final : public StreamSink {
public:
    std::function<void()> action;
    void onTextDelta(std::string_view) override {
        if (!fired.exchange(true) && action)
            action();
    }
    std::atomic<bool> fired{false};
};

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

class EpisodeRunnerTest : public EvaluationTest {
protected:
    void SetUp() override {
        EvaluationTest::SetUp();
        registry_.add(makeReadTool());
        registry_.add(makeWriteTool());
        registry_.add(makeEditTool());
        for (auto& tool : makeWorkspaceTools())
            registry_.add(std::move(tool));
        auto opened = TrajectoryStore::open((root_ / "store.db").string());
        ASSERT_TRUE(opened) << opened.error().message;
        store_ = std::move(opened).value();
        workspace_ = makePythonWorkspace(kTinyTask, tinyCandidate("        return x"));
        service_ = std::make_unique<EvaluationService>(EvaluationServiceConfig{
            .python = KWB_TEST_EXPECTED_PYTHON, .concurrentEvaluations = 1, .gpuCount = 0});
    }

    std::unique_ptr<LlmProvider> start(const json& turns, Api api = Api::OpenAi) {
        server_ = std::make_unique<ScriptedLlmServer>(json{{"turns", turns}});
        if (!server_->started())
            return nullptr;
        return makeProvider(settingsFor(api, *server_), waits_.sleeper());
    }

    EpisodeConfig config(const fs::path& workspace) const {
        EpisodeConfig c;
        c.taskPath = (root_ / "pyws_task.py").string();
        c.workspace = workspace.string();
        c.model = "test-model";
        c.evaluation = cpuOptions();
        c.python = KWB_TEST_EXPECTED_PYTHON;
        c.finalEvaluation = false;
        // As an AgentSession runs them: the tools and the final evaluation submit to a service.
        c.evaluations = service_.get();
        return c;
    }

    std::vector<EpisodeEvent> events(EpisodeId id) const {
        auto loaded = store_->loadEvents(id);
        EXPECT_TRUE(loaded) << loaded.error().message;
        return loaded ? loaded.value() : std::vector<EpisodeEvent>{};
    }

    std::vector<std::string> kinds(EpisodeId id) const {
        std::vector<std::string> out;
        for (const auto& e : events(id))
            out.emplace_back(eventKindName(e.kind));
        return out;
    }

    // The messages of the n-th request the server received, as one text.
    std::string requestText(std::size_t n) const {
        const auto requests = server_->requests();
        EXPECT_GT(requests.size(), n);
        return requests.size() > n ? requests[n]["body"]["messages"].dump() : "";
    }

    // The pruning tests' conversation: SKILL.md read (thousands of characters), model_new.py
    // read, done, over a budget of 1000 tokens with the last turn kept whole. The server reports
    // `firstUsage` and `secondUsage` with the two tool turns (null: nothing). Returns the
    // episode's result and the messages of the third request.
    std::pair<EpisodeRunResult, json> runOverThePruningBudget(const json& firstUsage,
                                                              const json& secondUsage) {
        json first = readSkill("c1");
        json second = toolTurn("Next.", "c2", "Read", {{"file_path", "model_new.py"}});
        if (!firstUsage.is_null())
            first["usage"] = firstUsage;
        if (!secondUsage.is_null())
            second["usage"] = secondUsage;
        auto provider = start({first, second, textTurn("Done.")});
        EXPECT_TRUE(provider) << server_->startError();
        if (!provider)
            return {};
        SteeringController steering;
        EpisodeConfig c = config(workspace_);
        c.contextTokenBudget = 1000;
        c.pruning.keepRecentTurns = 1;
        EpisodeRunner runner(*store_, *provider, registry_, steering, c);
        EpisodeRunResult result = runner.run();
        const auto requests = server_->requests();
        json messages = requests.size() > 2 ? requests.at(2)["body"]["messages"] : json::array();
        return {std::move(result), std::move(messages)};
    }

    // Waits until `predicate` holds (at most 30 s).
    template <typename Predicate>
    static bool waitFor(Predicate predicate) {
        for (int i = 0; i < 3000; ++i) {
            if (predicate())
                return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }

    ToolRegistry registry_;
    std::unique_ptr<TrajectoryStore> store_;
    std::unique_ptr<ScriptedLlmServer> server_;
    RecordedWaits waits_;
    std::unique_ptr<EvaluationService> service_;
    fs::path workspace_;
};

} // namespace

TEST_F(EpisodeRunnerTest, WritesVerifiesAndStopsWithTheFinalEvaluationsReward) {
    const std::string candidate = tinyCandidate(kGoodForward);
    auto provider =
        start({toolTurn("Writing the candidate.", "call_1", "Write",
                        {{"file_path", "model_new.py"}, {"content", candidate}}),
               toolTurn("Verifying.", "call_2", "Verify", json::object()), textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeConfig c = config(workspace_);
    c.finalEvaluation = true;
    EpisodeRunner runner(*store_, *provider, registry_, steering, c);
    const EpisodeRunResult result = runner.run();

    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    EXPECT_EQ(result.turns, 3);
    EXPECT_EQ(readText(workspace_ / "model_new.py"), candidate);
    EXPECT_EQ(steering.state(), AgentState::Stopped);

    auto record = store_->loadEpisode(result.id);
    ASSERT_TRUE(record) << record.error().message;
    EXPECT_EQ(record.value().status, EpisodeStatus::Finished);
    EXPECT_EQ(record.value().turns, 3);
    EXPECT_EQ(record.value().task, c.taskPath);
    EXPECT_GT(record.value().usage.inputTokens, 0);
    const json& final = record.value().finalEvaluation;
    ASSERT_TRUE(final.is_object());
    // A correct pure-Python candidate: reward -1 with the torch_fallback flag.
    ASSERT_TRUE(record.value().reward.has_value());
    EXPECT_EQ(*record.value().reward, final["reward"].get<double>());
    EXPECT_EQ(result.reward, record.value().reward);
    EXPECT_EQ(final["reward"], -1);
    EXPECT_TRUE(contains(final["flags"].dump(), "torch_fallback")) << final["flags"].dump();

    // The events in the order they happened.
    std::vector<std::string> steps;
    for (const auto& kind : kinds(result.id))
        if (steps.empty() || kind != "file_diff" || steps.back() != "file_diff")
            steps.push_back(kind);
    const std::vector<std::string> expected = {
        "system_prompt", "user_message", "file_diff",   "assistant_message",
        "tool_call",     "file_diff",    "tool_result", "assistant_message",
        "tool_call",     "tool_result",  "evaluation",  "assistant_message",
        "evaluation",    "status"};
    EXPECT_EQ(steps, expected);
    const auto all = events(result.id);
    ASSERT_FALSE(all.empty());
    EXPECT_TRUE(contains(all[0].payload["text"].get<std::string>(), "class Model"));
    int evaluations = 0;
    for (const auto& e : all) {
        if (e.kind == EventKind::Evaluation) {
            ++evaluations;
            EXPECT_EQ(e.payload["reward"], -1);
            EXPECT_EQ(e.payload["trigger"], evaluations == 1 ? "Verify" : "final");
        }
        if (e.kind == EventKind::FileDiff && e.payload["tool"] == "Write") {
            EXPECT_EQ(e.payload["path"], "model_new.py");
            EXPECT_EQ(e.payload["after"], candidate);
            EXPECT_TRUE(contains(e.payload["diff"].get<std::string>(), "+" + kGoodForward));
        }
    }
    EXPECT_EQ(evaluations, 2);

    // The model saw its tool results, and the tool schemas.
    ASSERT_EQ(server_->requests().size(), 3u);
    for (const auto& request : server_->requests())
        EXPECT_TRUE(request["problem"].is_null()) << request["problem"];
    EXPECT_TRUE(contains(requestText(2), "reward -1"));
    EXPECT_EQ(server_->requests()[0]["body"]["tools"].size(), registry_.schemas().size());

    // The API key never reaches the store file.
    store_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) {
        const fs::path file = root_ / (std::string("store.db") + suffix);
        if (fs::exists(file)) {
            EXPECT_FALSE(contains(readText(file), kTestKey)) << file;
        }
    }
}

// An evaluator that cannot run (here: no interpreter) judged nothing: the episode ends as an
// infrastructure error with its cause, never with a reward of -1 a trainer would learn from.
TEST_F(EpisodeRunnerTest, AFinalEvaluationThatCannotRunIsAnInfrastructureErrorNotAReward) {
    auto provider = start(json::array({textTurn("Done.")}));
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeConfig c = config(workspace_);
    c.finalEvaluation = true;
    c.evaluations = nullptr; // the service was made for the test's interpreter
    c.python = (root_ / "no-such-python" / "bin" / "python3").string();
    EpisodeRunner runner(*store_, *provider, registry_, steering, c);
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::InfrastructureError) << result.message;
    EXPECT_EQ(result.cause, "evaluator_python_missing");
    EXPECT_FALSE(result.reward.has_value());
    const auto stored = store_->loadEpisode(result.id);
    ASSERT_TRUE(stored) << stored.error().message;
    EXPECT_EQ(stored.value().status, EpisodeStatus::InfrastructureError);
    EXPECT_FALSE(stored.value().reward.has_value());
}

// The tiny task with inputs of 16 GiB: more than a quarter of any evaluation's memory budget,
// found by inspect on the meta device before anything is allocated.
std::string oversizedTask() {
    std::string task = kTinyTask;
    const std::string small = "torch.randn(8, 16)";
    task.replace(task.find(small), small.size(), "torch.randn(1 << 28, 16)");
    return task;
}

// A task this machine cannot judge says nothing about the policy: the episode fails with the
// evaluator's cause and no reward, as soon as a tool's evaluation finds it (the model is not
// asked again), and its record keeps that evaluation.
TEST_F(EpisodeRunnerTest, ATaskTooLargeForTheMachineFailsTheEpisodeWithoutAReward) {
    const fs::path large =
        makePythonWorkspace(oversizedTask(), tinyCandidate("        return x"), "large");
    auto provider =
        start({toolTurn("Verifying.", "c1", "Verify", json::object()), textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeConfig c = config(large);
    c.taskPath = (root_ / "large_task.py").string();
    c.finalEvaluation = true;
    EpisodeRunner runner(*store_, *provider, registry_, steering, c);
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Failed) << result.message;
    EXPECT_EQ(result.cause, "task_too_large");
    EXPECT_NE(result.message.find("GiB"), std::string::npos) << result.message;
    EXPECT_FALSE(result.reward.has_value());
    EXPECT_EQ(server_->requests().size(), 1u);
    const EpisodeRecord record = store_->loadEpisode(result.id).value();
    EXPECT_EQ(record.status, EpisodeStatus::Failed);
    EXPECT_EQ(record.endCause, "task_too_large");
    EXPECT_FALSE(record.reward.has_value());
    ASSERT_TRUE(record.finalEvaluation.is_object());
    EXPECT_EQ(record.finalEvaluation["failure"]["kind"], "task_too_large");
}

TEST_F(EpisodeRunnerTest, AFinalEvaluationOfATaskTooLargeFailsTheEpisodeWithoutAReward) {
    const fs::path large =
        makePythonWorkspace(oversizedTask(), tinyCandidate("        return x"), "large");
    auto provider = start(json::array({textTurn("Done.")}));
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeConfig c = config(large);
    c.finalEvaluation = true;
    EpisodeRunner runner(*store_, *provider, registry_, steering, c);
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Failed) << result.message;
    EXPECT_EQ(result.cause, "task_too_large");
    EXPECT_FALSE(result.reward.has_value());
}

// cancel() is stop() for work that is given up (a stopped rollout's running episodes): the
// episode ends cancelled, not stopped, and is not evaluated.
TEST_F(EpisodeRunnerTest, ACancelledEpisodeEndsCancelledWithoutAReward) {
    json slow = textTurn("one two three four five six seven eight nine ten");
    slow["faults"] = json::array({{{"kind", "slow_tokens"}, {"delay", 1.0}}});
    auto provider = start({slow, textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    struct CancelOnThirdToken final : StreamSink {
        SteeringController* steering = nullptr;
        int count = 0;
        void onTextDelta(std::string_view) override {
            if (++count == 3)
                steering->cancel();
        }
    } observer;
    observer.steering = &steering;
    EpisodeConfig c = config(workspace_);
    c.finalEvaluation = true;
    EpisodeRunner runner(*store_, *provider, registry_, steering, c, &observer);
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Cancelled) << result.message;
    EXPECT_EQ(result.cause, "cancelled");
    EXPECT_TRUE(steering.stopRequested());
    const EpisodeRecord record = store_->loadEpisode(result.id).value();
    EXPECT_EQ(record.status, EpisodeStatus::Cancelled);
    EXPECT_FALSE(record.reward.has_value());
    EXPECT_TRUE(record.finalEvaluation.is_null());
}

TEST_F(EpisodeRunnerTest, TheTurnLimitEndsTheEpisode) {
    auto provider =
        start({readSkill("c1"), toolTurn("Again.", "c2", "Read", {{"file_path", "model_new.py"}}),
               readSkill("c3"), textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeConfig c = config(workspace_);
    c.maxTurns = 2;
    EpisodeRunner runner(*store_, *provider, registry_, steering, c);
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Finished);
    EXPECT_TRUE(contains(result.message, "turn limit (2)")) << result.message;
    EXPECT_EQ(result.turns, 2);
    EXPECT_EQ(server_->requests().size(), 2u);
    EXPECT_EQ(store_->loadEpisode(result.id).value().turns, 2);
}

TEST_F(EpisodeRunnerTest, PausesAfterTheStepTakesEditsAndQueuedMessagesThenResumes) {
    auto provider = start({readSkill("c1"), textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    FirstDeltaSink observer;
    observer.action = [&] { steering.pause(); };
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_), &observer);
    EpisodeRunResult result;
    std::thread thread([&] { result = runner.run(); });

    ASSERT_TRUE(waitFor([&] { return steering.state() == AgentState::Paused; }));
    EXPECT_EQ(server_->requests().size(), 1u); // the step finished, the next has not started
    writeText(workspace_ / "model_new.py", tinyCandidate(kGoodForward));
    EXPECT_TRUE(steering.notifyFileEdited("model_new.py"));
    steering.injectMessage("Please also look at the weights.", SteeringController::Mode::Queue);
    steering.resume();
    thread.join();

    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    const std::string second = requestText(1);
    EXPECT_TRUE(contains(second, "The user edited model_new.py while you were paused")) << second;
    EXPECT_TRUE(contains(second, "Please also look at the weights.")) << second;
    std::vector<std::string> actions;
    bool userDiff = false;
    for (const auto& e : events(result.id)) {
        if (e.kind == EventKind::Steering)
            actions.push_back(e.payload["action"]);
        if (e.kind == EventKind::FileDiff && e.payload["tool"] == "user")
            userDiff = e.payload["after"] == tinyCandidate(kGoodForward);
    }
    EXPECT_EQ(json(actions).dump(), json({"paused", "resumed", "file_edited", "message"}).dump());
    EXPECT_TRUE(userDiff);
}

TEST_F(EpisodeRunnerTest, FileEditsAreRefusedWhileRunning) {
    SteeringController steering;
    EXPECT_EQ(steering.state(), AgentState::Running);
    EXPECT_FALSE(steering.notifyFileEdited("model_new.py"));
}

TEST_F(EpisodeRunnerTest, ASteeringMessageCancelsTheStreamingCallAndGoesFirst) {
    json slow = textTurn("one two three four five six seven eight nine ten eleven twelve");
    slow["tool_calls"] =
        json::array({{{"id", "c1"}, {"name", "Read"}, {"arguments", {{"file_path", "SKILL.md"}}}}});
    slow["faults"] = json::array({{{"kind", "slow_tokens"}, {"delay", 1.0}}});
    auto provider = start({slow, textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    FirstDeltaSink observer;
    observer.action = [&] {
        steering.injectMessage("Use shared memory.", SteeringController::Mode::Steer);
    };
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_), &observer);
    const auto started = std::chrono::steady_clock::now();
    const EpisodeRunResult result = runner.run();
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(8));
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 3u);
    EXPECT_FALSE(contains(requests[0]["body"]["messages"].dump(), "Use shared memory."));
    const json& redone = requests[1]["body"]["messages"];
    EXPECT_EQ(redone.back()["role"], "user");
    EXPECT_EQ(redone.back()["content"], "Use shared memory.");
    EXPECT_EQ(result.turns, 2); // the cancelled reply is not part of the conversation
}

TEST_F(EpisodeRunnerTest, InterruptCancelsTheStreamingCallPausesAndResumes) {
    json slow = textTurn("one two three four five six seven eight nine ten eleven twelve");
    slow["faults"] = json::array({{{"kind", "slow_tokens"}, {"delay", 1.0}}});
    auto provider = start({slow, textTurn("never served")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    FirstDeltaSink observer;
    observer.action = [&] { steering.interrupt(); };
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_), &observer);
    EpisodeRunResult result;
    const auto started = std::chrono::steady_clock::now();
    std::thread thread([&] { result = runner.run(); });
    ASSERT_TRUE(waitFor([&] { return steering.state() == AgentState::Paused; }));
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(6));
    EXPECT_EQ(server_->requests().size(), 1u);
    steering.resume();
    thread.join();
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    EXPECT_EQ(result.turns, 1); // the interrupted reply was dropped, the redone one kept
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[1]["turn"], 0); // the slow fault consumed an attempt, not the turn
    std::vector<std::string> actions;
    for (const auto& e : events(result.id))
        if (e.kind == EventKind::Steering)
            actions.push_back(e.payload["action"]);
    EXPECT_EQ(json(actions).dump(), json({"interrupted", "paused", "resumed"}).dump());
}

TEST_F(EpisodeRunnerTest, StopMidEpisodeLeavesAStoppedEpisode) {
    json slow = textTurn("one two three four five six seven eight nine ten");
    slow["faults"] = json::array({{{"kind", "slow_tokens"}, {"delay", 1.0}}});
    auto provider = start({readSkill("c1"), slow, textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    struct StopOnSecondTurn final : StreamSink {
        std::function<void()> action;
        int count = 0;
        void onTextDelta(std::string_view) override {
            if (++count == 3 && action)
                action();
        }
    } observer;
    observer.action = [&] { steering.stop(); };
    EpisodeConfig c = config(workspace_);
    c.finalEvaluation = true; // not run after a stop
    EpisodeRunner runner(*store_, *provider, registry_, steering, c, &observer);
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Stopped);
    auto record = store_->loadEpisode(result.id);
    ASSERT_TRUE(record);
    EXPECT_EQ(record.value().status, EpisodeStatus::Stopped);
    EXPECT_FALSE(record.value().reward.has_value());
    EXPECT_FALSE(record.value().finishedAt.empty());
    EXPECT_EQ(record.value().turns, 1);
    EXPECT_EQ(steering.state(), AgentState::Stopped);
}

TEST_F(EpisodeRunnerTest, RepeatingTheSameCallIsReportedAsStuck) {
    auto provider = start({readSkill("c1"), readSkill("c2"), readSkill("c3"), textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    int stuck = 0;
    for (const auto& e : events(result.id))
        if (e.kind == EventKind::Status &&
            contains(e.payload.value("message", ""), "stuck: the same Read call 3 times"))
            ++stuck;
    EXPECT_EQ(stuck, 1);
    EXPECT_TRUE(contains(requestText(3), "You are repeating yourself"));
    EXPECT_FALSE(contains(requestText(2), "You are repeating yourself"));
}

TEST_F(EpisodeRunnerTest, RepeatingTheSameErrorIsReportedAsStuck) {
    json turns = json::array();
    for (int i = 0; i < 3; ++i)
        turns.push_back(toolTurn("Reading.", "c" + std::to_string(i), "Read",
                                 {{"file_path", "missing" + std::to_string(i) + "/../nope.py"}}));
    turns.push_back(textTurn("Done."));
    auto provider = start(turns);
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    bool stuck = false;
    for (const auto& e : events(result.id))
        stuck = stuck || contains(e.payload.value("message", ""), "stuck: the same error 3 times");
    EXPECT_TRUE(stuck);
    EXPECT_TRUE(contains(requestText(3), "You are repeating yourself"));
}

TEST_F(EpisodeRunnerTest, AMalformedToolCallIsRecordedAsSuchAFailingToolIsNot) {
    auto provider =
        start({toolTurn("Reading.", "c1", "Read", {{"path", "model.py"}}),
               toolTurn("Reading.", "c2", "Read", {{"file_path", "nope.py"}}), textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    std::map<std::string, bool> invalidByCall;
    for (const auto& e : events(result.id))
        if (e.kind == EventKind::ToolResult) {
            EXPECT_TRUE(e.payload.value("tool_error", false)) << e.payload.dump();
            invalidByCall[e.payload.value("tool_call_id", "")] =
                e.payload.value("invalid_call", false);
        }
    EXPECT_EQ(invalidByCall, (std::map<std::string, bool>{{"c1", true}, {"c2", false}}))
        << "an unknown parameter is the model's malformed call; a missing file is the tool's error";
}

TEST_F(EpisodeRunnerTest, SixRepeatsStopTheEpisode) {
    json turns = json::array();
    for (int i = 0; i < 7; ++i)
        turns.push_back(readSkill("c" + std::to_string(i)));
    auto provider = start(turns);
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Stopped);
    EXPECT_TRUE(contains(result.message, "stuck: the same Read call 6 times")) << result.message;
    EXPECT_EQ(server_->requests().size(), 6u);
}

TEST_F(EpisodeRunnerTest, AForkRestoresTheFilesAndTheConversationOfItsStep) {
    const std::string first = tinyCandidate("        return x * 2");
    const std::string second = tinyCandidate(kGoodForward);
    auto provider = start(
        {toolTurn("First try.", "w1", "Write", {{"file_path", "model_new.py"}, {"content", first}}),
         toolTurn("Second try.", "w2", "Write",
                  {{"file_path", "model_new.py"}, {"content", second}}),
         toolTurn("A helper.", "w3", "Write",
                  {{"file_path", "kernels/notes.txt"}, {"content", "later"}}),
         textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    EpisodeId parent = 0;
    std::int64_t forkStep = 0;
    {
        SteeringController steering;
        EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
        const EpisodeRunResult result = runner.run();
        ASSERT_EQ(result.status, EpisodeStatus::Finished) << result.message;
        parent = result.id;
        for (const auto& e : events(parent))
            if (e.kind == EventKind::ToolResult && e.payload["tool_call_id"] == "w1")
                forkStep = e.sequence;
        ASSERT_GT(forkStep, 0);
    }
    ASSERT_EQ(readText(workspace_ / "model_new.py"), second);
    ASSERT_TRUE(fs::exists(workspace_ / "kernels/notes.txt"));

    auto forkProvider = start(json::array({textTurn("Forked and done.")}));
    ASSERT_TRUE(forkProvider) << server_->startError();
    SteeringController steering;
    const fs::path forkDir = root_ / "fork";
    EpisodeRunner runner(*store_, *forkProvider, registry_, steering, config(forkDir));
    const EpisodeRunResult forked = runner.forkFrom(parent, forkStep);
    ASSERT_EQ(forked.status, EpisodeStatus::Finished) << forked.message;
    EXPECT_NE(forked.id, parent);
    EXPECT_EQ(readText(forkDir / "model_new.py"), first);
    EXPECT_FALSE(fs::exists(forkDir / "kernels/notes.txt"));
    EXPECT_EQ(readText(forkDir / "SKILL.md"), readText(workspace_ / "SKILL.md"));

    auto record = store_->loadEpisode(forked.id);
    ASSERT_TRUE(record);
    EXPECT_EQ(record.value().parentId, parent);
    EXPECT_EQ(record.value().forkSequence, forkStep);
    EXPECT_EQ(record.value().turns, 2);

    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_TRUE(requests[0]["problem"].is_null()) << requests[0]["problem"];
    const json& messages = requests[0]["body"]["messages"];
    ASSERT_EQ(messages.size(), 4u) << messages.dump(1);
    EXPECT_EQ(messages[0]["role"], "system");
    EXPECT_EQ(messages[2]["tool_calls"][0]["id"], "w1");
    EXPECT_EQ(messages[3]["role"], "tool");
    EXPECT_FALSE(contains(messages.dump(), "Second try."));
}

TEST_F(EpisodeRunnerTest, LinksInTheWorkspaceNeverReachTheStore) {
    // A host file the sandbox cannot see, linked from the workspace by the agent or a user.
    const fs::path host = root_ / "host-secret.txt";
    std::ofstream(host) << "ssh-rsa AAAA-the-host-key";
    fs::create_symlink(host, workspace_ / "notes.txt");
    fs::create_directories(root_ / "host-folder");
    std::ofstream(root_ / "host-folder" / "id.txt") << "another host file";
    fs::create_directories(workspace_ / "kernels");
    fs::create_directory_symlink(root_ / "host-folder", workspace_ / "kernels" / "linked");
    auto provider = start(json::array({textTurn("Done.")}));
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
    const EpisodeRunResult result = runner.run();
    ASSERT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    for (const auto& e : events(result.id)) {
        EXPECT_FALSE(contains(e.payload.dump(), "the-host-key")) << e.payload.dump();
        EXPECT_FALSE(contains(e.payload.dump(), "another host file")) << e.payload.dump();
    }
}

TEST_F(EpisodeRunnerTest, AForkRefusesAParentWhosePathsLeaveTheWorkspace) {
    EpisodeRecord record;
    record.task = (root_ / "pyws_task.py").string();
    record.model = "test-model";
    const EpisodeId parent = store_->createEpisode(record).value().id;
    ASSERT_TRUE(
        store_
            ->appendEvent(parent, EventKind::SystemPrompt, messageToJson(Message::system("prompt")))
            .ok());
    ASSERT_TRUE(store_
                    ->appendEvent(parent, EventKind::FileDiff,
                                  {{"path", "../../escaped.txt"}, {"after", "planted"}})
                    .ok());
    auto provider = start(json::array({textTurn("never asked")}));
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    const fs::path forkDir = root_ / "forks" / "one";
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(forkDir));
    const EpisodeRunResult forked = runner.forkFrom(parent, 2);
    EXPECT_EQ(forked.id, 0);
    EXPECT_TRUE(contains(forked.message, "unusable file")) << forked.message;
    EXPECT_FALSE(fs::exists(root_ / "escaped.txt"));
    EXPECT_FALSE(fs::exists(root_ / "forks" / "escaped.txt"));
    EXPECT_TRUE(server_->requests().empty());
}

TEST_F(EpisodeRunnerTest, ARepeatedlyMalformedReplyFailsTheEpisode) {
    json broken = textTurn("never seen");
    broken["faults"] = json::array();
    for (int i = 0; i < 4; ++i)
        broken["faults"].push_back({{"kind", "malformed_json"}});
    auto provider = start(json::array({broken}));
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeConfig c = config(workspace_);
    c.finalEvaluation = true; // not run after a provider failure
    EpisodeRunner runner(*store_, *provider, registry_, steering, c);
    const EpisodeRunResult result = runner.run();
    // The server's fault, not the model's: no reward, and the cause names it.
    EXPECT_EQ(result.status, EpisodeStatus::InfrastructureError);
    EXPECT_EQ(result.cause, "provider_malformed_response");
    EXPECT_TRUE(contains(result.message, "provider error: malformed_response")) << result.message;
    auto record = store_->loadEpisode(result.id);
    ASSERT_TRUE(record);
    EXPECT_EQ(record.value().status, EpisodeStatus::InfrastructureError);
    EXPECT_EQ(record.value().endCause, "provider_malformed_response");
    EXPECT_FALSE(record.value().reward.has_value());
    bool errorStored = false;
    for (const auto& e : events(result.id))
        if (e.kind == EventKind::Error)
            errorStored = e.payload["kind"] == "malformed_response" &&
                          !e.payload["message"].get<std::string>().empty();
    EXPECT_TRUE(errorStored);
}

// A stream cut after output began cannot be retried by the provider (the text reached the
// sink); the runner drops the partial reply and asks again, a bounded number of times.
TEST_F(EpisodeRunnerTest, AReplyCutMidStreamIsAskedAgainThenGivesUp) {
    const json cutAfterText = {{"kind", "cut_stream"}, {"after_events", 4}};
    const json cutCleanly = {{"kind", "cut_stream"}, {"after_events", 3}, {"graceful", true}};
    json first = readSkill("c1");
    first["faults"] = {cutAfterText, cutCleanly};
    json last = textTurn("All done, nothing more to change.");
    last["faults"] = {cutAfterText, cutAfterText, cutAfterText};
    auto provider = start({first, last});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
    const EpisodeRunResult result = runner.run();

    // The first call survives two cuts; the last is cut three times, one more than allowed.
    EXPECT_EQ(result.status, EpisodeStatus::InfrastructureError) << result.message;
    EXPECT_TRUE(contains(result.message, "before the response was complete")) << result.message;
    EXPECT_EQ(server_->requests().size(), 6u);
    EXPECT_EQ(result.turns, 1);
    int askedAgain = 0, errors = 0, toolCalls = 0;
    for (const auto& e : events(result.id)) {
        if (e.kind == EventKind::Error) {
            ++errors;
            askedAgain += e.payload.value("asked_again", false);
            EXPECT_EQ(e.payload["kind"], "network") << e.payload.dump();
        }
        toolCalls += e.kind == EventKind::ToolCall;
    }
    EXPECT_EQ(errors, 5);
    EXPECT_EQ(askedAgain, 4);
    EXPECT_EQ(toolCalls, 1); // the cut replies' partial tool calls never ran
    // The repeated request is the same conversation: nothing of the cut reply was kept.
    EXPECT_EQ(requestText(0), requestText(1));
    EXPECT_EQ(requestText(1), requestText(2));
    EXPECT_EQ(requestText(3), requestText(5));
}

// A connection the server aborts with a TCP reset after output began (a killed server, a proxy
// that crashed): the turn is asked again with nothing of the partial reply kept, and the episode
// goes on.
TEST_F(EpisodeRunnerTest, AConnectionResetMidReplyIsAskedAgain) {
    json last = textTurn("All done, nothing more to change.");
    last["faults"] = {{{"kind", "cut_stream"}, {"after_events", 3}, {"reset", true}}};
    auto provider = start({readSkill("c1"), last});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    EXPECT_EQ(result.cause, "model_stopped");
    EXPECT_EQ(server_->requests().size(), 3u);
    EXPECT_EQ(result.turns, 2);
    int resets = 0;
    for (const auto& e : events(result.id))
        if (e.kind == EventKind::Error) {
            ++resets;
            EXPECT_EQ(e.payload["kind"], "network") << e.payload.dump();
            EXPECT_TRUE(e.payload.value("asked_again", false)) << e.payload.dump();
            EXPECT_TRUE(contains(e.payload.value("message", ""), "reset")) << e.payload.dump();
        }
    EXPECT_EQ(resets, 1);
    EXPECT_EQ(requestText(1), requestText(2));
}

// An empty reply and an aborted generation are the server's failures, not the model stopping:
// they are asked again and, when that keeps failing, end as an infrastructure error with no
// reward. A model's own empty answer with a real stop reason is still the model's.
TEST_F(EpisodeRunnerTest, EmptyAndAbortedRepliesAreAskedAgainNotScored) {
    for (const Api api : {Api::OpenAi, Api::Anthropic}) {
        SCOPED_TRACE(apiName(::testing::TestParamInfo<Api>(api, 0)));
        json first = readSkill("c1");
        first["faults"] = {{{"kind", "empty_reply"}},
                           {{"kind", "finish_reason"}, {"reason", "abort"}}};
        json last = textTurn("All done.");
        last["faults"] = {{{"kind", "finish_reason"}, {"reason", "error"}}};
        auto provider = start({first, last}, api);
        ASSERT_TRUE(provider) << server_->startError();
        SteeringController steering;
        EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
        const EpisodeRunResult result = runner.run();
        EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
        EXPECT_EQ(result.cause, "model_stopped");
        EXPECT_EQ(result.turns, 2);
        EXPECT_EQ(server_->requests().size(), 5u);
        int askedAgain = 0;
        std::string discarded;
        for (const auto& e : events(result.id))
            if (e.kind == EventKind::Error) {
                EXPECT_EQ(e.payload["kind"], "server") << e.payload.dump();
                askedAgain += e.payload.value("asked_again", false);
                if (e.payload.contains("discarded_output"))
                    discarded += e.payload["discarded_output"]["text"].get<std::string>();
            }
        // The empty reply was retried by the provider (nothing was shown); the two aborted
        // ones had streamed text, so the runner asked again and kept what it dropped.
        EXPECT_EQ(askedAgain, 2);
        EXPECT_EQ(discarded, "Reading.All done.");
    }

    json empty = textTurn("never seen");
    for (int i = 0; i < 4; ++i)
        empty["faults"].push_back({{"kind", "empty_reply"}});
    auto provider = start(json::array({empty}));
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeConfig c = config(workspace_);
    c.finalEvaluation = true; // not run: there is nothing to score
    EpisodeRunner runner(*store_, *provider, registry_, steering, c);
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::InfrastructureError) << result.message;
    EXPECT_EQ(result.cause, "provider_server");
    EXPECT_TRUE(contains(result.message, "no content and no stop reason")) << result.message;
    auto record = store_->loadEpisode(result.id);
    ASSERT_TRUE(record);
    EXPECT_FALSE(record.value().reward.has_value());

    auto silent = start(json::array({textTurn("")}));
    ASSERT_TRUE(silent) << server_->startError();
    EpisodeRunner modelStops(*store_, *silent, registry_, steering, config(workspace_));
    const EpisodeRunResult stopped = modelStops.run();
    EXPECT_EQ(stopped.status, EpisodeStatus::Finished) << stopped.message;
    EXPECT_EQ(stopped.cause, "model_stopped");
    EXPECT_EQ(server_->requests().size(), 1u);
}

// A malformed event after the first token is asked again like a cut, and the streamed text it
// discarded is in the error event.
TEST_F(EpisodeRunnerTest, AMalformedEventMidStreamIsAskedAgainAndItsPartialOutputKept) {
    for (const Api api : {Api::OpenAi, Api::Anthropic}) {
        SCOPED_TRACE(apiName(::testing::TestParamInfo<Api>(api, 0)));
        json turn = textTurn("one two three four five six");
        turn["faults"] = {{{"kind", "bad_event"}, {"after_events", api == Api::OpenAi ? 3 : 5}}};
        auto provider = start(json::array({turn}), api);
        ASSERT_TRUE(provider) << server_->startError();
        SteeringController steering;
        EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
        const EpisodeRunResult result = runner.run();
        EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
        EXPECT_EQ(server_->requests().size(), 2u);
        int errors = 0;
        for (const auto& e : events(result.id))
            if (e.kind == EventKind::Error) {
                ++errors;
                EXPECT_EQ(e.payload["kind"], "malformed_response") << e.payload.dump();
                EXPECT_TRUE(e.payload.value("asked_again", false));
                EXPECT_EQ(e.payload["discarded_output"]["text"], "one two ") << e.payload.dump();
            }
        EXPECT_EQ(errors, 1);
    }
}

TEST_F(EpisodeRunnerTest, TheEpisodeCostFollowsTheModelsPrice) {
    json first = toolTurn("Look.", "c1", "Read", {{"file_path", "model_new.py"}});
    first["usage"] = {{"input", 600'000}, {"output", 50'000}, {"cached", 200'000}};
    json last = textTurn("Done.");
    last["usage"] = {{"input", 400'000}, {"output", 50'000}, {"cached", 200'000}};
    auto provider = start({first, last});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeConfig c = config(workspace_);
    c.model = "gpt-4.1"; // $2.00 input, $0.50 cached input, $8.00 output per million
    EpisodeRunner runner(*store_, *provider, registry_, steering, c);
    const EpisodeRunResult result = runner.run();
    ASSERT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    // 600k uncached at 2.00 + 400k cached at 0.50 + 100k out at 8.00 = 1.2 + 0.2 + 0.8.
    EXPECT_NEAR(store_->loadEpisode(result.id).value().costUsd, 2.2, 1e-9);

    // A model without a price costs nothing in the record and "n/a" on screen, never a guess.
    auto unpriced = start(json::array({textTurn("Done.")}));
    ASSERT_TRUE(unpriced) << server_->startError();
    SteeringController secondSteering;
    EpisodeRunner second(*store_, *unpriced, registry_, secondSteering, config(workspace_));
    const EpisodeRunResult other = second.run();
    EXPECT_EQ(store_->loadEpisode(other.id).value().costUsd, 0.0);
}

TEST_F(EpisodeRunnerTest, OldToolOutputsArePrunedOverTheBudget) {
    const auto [result, messages] =
        runOverThePruningBudget(nullptr, {{"input", 5000}, {"output", 10}});
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    ASSERT_GE(messages.size(), 6u);
    EXPECT_EQ(messages[0], server_->requests().at(0)["body"]["messages"][0]); // system kept
    const std::string pruned = messages[3]["content"];
    EXPECT_TRUE(contains(pruned, "[output of Read at step ")) << pruned;
    EXPECT_TRUE(contains(pruned, " pruned: ")) << pruned;
    EXPECT_FALSE(contains(messages[5]["content"].get<std::string>(), "pruned")); // last turn
    // The store keeps the whole output.
    for (const auto& e : events(result.id)) {
        if (e.kind == EventKind::ToolResult && e.payload["tool_call_id"] == "c1") {
            EXPECT_FALSE(contains(e.payload["text"].get<std::string>(), "pruned:"));
        }
    }
}

TEST_F(EpisodeRunnerTest, AServerThatUnderReportsItsUsageIsPrunedForByTheText) {
    // The same conversation as above, but the server says each request held one token: the
    // text's own size (SKILL.md is thousands of characters) decides, and the old output goes.
    const json oneToken = {{"input", 1}, {"output", 1}};
    const auto [result, messages] = runOverThePruningBudget(oneToken, oneToken);
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    ASSERT_GE(messages.size(), 6u);
    EXPECT_TRUE(contains(messages[3]["content"].get<std::string>(), "[output of Read at step "))
        << messages[3]["content"];
}

TEST_F(EpisodeRunnerTest, AServerThatOverReportsItsUsageIsHeldToWhatOneReplyCanCost) {
    json reply = textTurn("Done.");
    reply["usage"] = {{"input", 2000}, {"output", 1'000'000'000'000}};
    auto provider = start(json::array({reply}));
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeConfig c = config(workspace_);
    c.maxTokens = 4096;
    EpisodeRunner runner(*store_, *provider, registry_, steering, c);
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    auto record = store_->loadEpisode(result.id);
    ASSERT_TRUE(record) << record.error().message;
    EXPECT_EQ(record.value().usage.outputTokens, 4096);
    EXPECT_EQ(record.value().usage.inputTokens, 2000);
    int noted = 0;
    for (const auto& e : events(result.id))
        if (e.kind == EventKind::Error && e.payload.value("kind", "") == "implausible_usage") {
            ++noted;
            EXPECT_EQ(e.payload["reported"]["output_tokens"], 1'000'000'000'000);
        }
    EXPECT_EQ(noted, 1);
}

TEST_F(EpisodeRunnerTest, AContextOverflowPrunesAndAsksAgain) {
    json first = readSkill("c1");
    first["usage"] = {{"input", 6000}, {"output", 10}};
    json second = toolTurn("Next.", "c2", "Read", {{"file_path", "model_new.py"}});
    second["fault"] = {{"kind", "context_overflow"}};
    auto provider = start({first, second, textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    EXPECT_EQ(result.cause, "model_stopped");
    ASSERT_EQ(server_->requests().size(), 4u);
    // The overflowing request held the whole SKILL.md; the one after it a placeholder.
    EXPECT_FALSE(contains(requestText(1), "pruned: "));
    EXPECT_TRUE(contains(requestText(2), "[output of Read at step ")) << requestText(2);
    int overflows = 0;
    for (const auto& e : events(result.id))
        if (e.kind == EventKind::Error) {
            ++overflows;
            EXPECT_EQ(e.payload["kind"], "context_too_long");
            EXPECT_TRUE(e.payload.value("asked_again", false));
            EXPECT_LT(e.payload["budget"].get<std::int64_t>(),
                      e.payload["estimated_tokens"].get<std::int64_t>());
        }
    EXPECT_EQ(overflows, 1);
}

TEST_F(EpisodeRunnerTest, AContextOverflowWithNothingToPruneEndsTheEpisodeAsContextFull) {
    json first = textTurn("Hello.");
    first["fault"] = {{"kind", "context_overflow"}};
    auto provider = start(json::array({first}));
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
    const EpisodeRunResult result = runner.run();
    // The model's work so far is what it is: evaluated like a turn limit, not a provider error.
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    EXPECT_EQ(result.cause, "context_full");
    EXPECT_TRUE(contains(result.message, "no longer fits")) << result.message;
    EXPECT_EQ(store_->loadEpisode(result.id).value().endCause, "context_full");
}

TEST_F(EpisodeRunnerTest, AReplyCutByTheTokenLimitGoesOnAndEveryTurnKeepsItsStopReason) {
    json cut = textTurn("I will now write the kernel, starting with");
    cut["stop"] = "max_tokens";
    auto provider = start({cut, textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
    const EpisodeRunResult result = runner.run();
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    EXPECT_EQ(result.cause, "model_stopped");
    EXPECT_EQ(result.turns, 2);
    EXPECT_TRUE(contains(requestText(1), "cut off at the output token limit")) << requestText(1);
    std::vector<std::string> reasons;
    for (const auto& e : events(result.id))
        if (e.kind == EventKind::AssistantMessage) {
            reasons.push_back(e.payload.value("stop_reason", ""));
            EXPECT_TRUE(e.payload.contains("usage")) << e.payload.dump();
            EXPECT_EQ(e.payload.value("attempts", 0), 1);
        }
    EXPECT_EQ(reasons, (std::vector<std::string>{"max_tokens", "end_turn"}));

    // Asked for, every reply's sampled tokens ride along in its event.
    auto sampled = start(json::array({textTurn("All done here.")}));
    ASSERT_TRUE(sampled) << server_->startError();
    SteeringController sampledSteering;
    EpisodeConfig withTokens = config(workspace_);
    withTokens.logprobs = true;
    withTokens.tokenIds = true;
    EpisodeRunner third(*store_, *sampled, registry_, sampledSteering, withTokens);
    const EpisodeRunResult tokens = third.run();
    ASSERT_EQ(tokens.status, EpisodeStatus::Finished) << tokens.message;
    bool found = false;
    for (const auto& e : events(tokens.id))
        if (e.kind == EventKind::AssistantMessage) {
            found = true;
            EXPECT_EQ(e.payload["tokens"]["ids"], json::array({1000, 1001, 1002}))
                << e.payload.dump();
            EXPECT_EQ(e.payload["tokens"]["logprobs"], json::array({-0.25, -0.5, -0.75}));
        }
    EXPECT_TRUE(found);

    // Replies that keep ending at the limit end the episode, saying so.
    auto again = start({cut, cut, cut});
    ASSERT_TRUE(again) << server_->startError();
    SteeringController secondSteering;
    EpisodeConfig c = config(workspace_);
    c.tokenLimitContinuations = 1;
    EpisodeRunner second(*store_, *again, registry_, secondSteering, c);
    const EpisodeRunResult limited = second.run();
    EXPECT_EQ(limited.status, EpisodeStatus::Finished) << limited.message;
    EXPECT_EQ(limited.cause, "token_limit");
    EXPECT_EQ(limited.turns, 2);
}

// Steering while a tool runs (not a model call): the tool's stop token is the step's.
TEST_F(EpisodeRunnerTest, StopWhileAToolRunsEndsTheToolAndTheEpisodePromptly) {
    for (auto& tool : makeBashTools())
        registry_.add(std::move(tool));
    auto provider = start({toolTurn("Waiting.", "call_1", "Bash", {{"command", "sleep 60"}}),
                           textTurn("never served")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
    EpisodeRunResult result;
    std::thread thread([&] { result = runner.run(); });
    ASSERT_TRUE(waitFor([&] { return steering.state() == AgentState::Tool; }));
    const auto stopped = std::chrono::steady_clock::now();
    steering.stop();
    thread.join();
    EXPECT_LT(std::chrono::steady_clock::now() - stopped, std::chrono::seconds(20));
    EXPECT_EQ(result.status, EpisodeStatus::Stopped) << result.message;
    EXPECT_EQ(server_->requests().size(), 1u) << "no model call after the stop";
    bool toolEnded = false;
    for (const auto& e : events(result.id))
        toolEnded |= e.kind == EventKind::ToolResult;
    EXPECT_TRUE(toolEnded) << "the cancelled call still has its result in the record";
}

// Stopped while the final evaluation runs: the episode is stopped, with no reward at all (a
// trainer must not read the cancelled evaluation's -1 as the policy's).
TEST_F(EpisodeRunnerTest, AStopDuringTheFinalEvaluationLeavesAStoppedEpisodeWithoutAReward) {
    const fs::path slow = makePythonWorkspace(
        kTinyTask,
        tinyCandidate("        time.sleep(120)\n        return x * self.weight * self.factor",
                      "import time\n"),
        "slow");
    auto provider = start(json::array({textTurn("Done.")}));
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeConfig c = config(slow);
    c.finalEvaluation = true;
    EpisodeRunner runner(*store_, *provider, registry_, steering, c);
    EpisodeRunResult result;
    std::thread thread([&] { result = runner.run(); });
    // The final evaluation is its own state, not the last tool's.
    const bool evaluating = waitFor([&] { return steering.state() == AgentState::Evaluating; });
    if (evaluating)
        std::this_thread::sleep_for(std::chrono::seconds(2)); // inside the evaluation's stages
    steering.stop();
    thread.join();
    ASSERT_TRUE(evaluating) << result.message;
    EXPECT_EQ(result.status, EpisodeStatus::Stopped) << result.message;
    EXPECT_EQ(result.cause, "stopped_in_final_evaluation");
    EXPECT_FALSE(result.reward.has_value());
    const EpisodeRecord record = store_->loadEpisode(result.id).value();
    EXPECT_EQ(record.status, EpisodeStatus::Stopped);
    EXPECT_EQ(record.endCause, "stopped_in_final_evaluation");
    EXPECT_FALSE(record.reward.has_value());
}

TEST_F(EpisodeRunnerTest, InterruptWhileAToolRunsPausesThenTheEpisodeGoesOn) {
    for (auto& tool : makeBashTools())
        registry_.add(std::move(tool));
    auto provider = start(
        {toolTurn("Waiting.", "call_1", "Bash", {{"command", "sleep 60"}}), textTurn("Done.")});
    ASSERT_TRUE(provider) << server_->startError();
    SteeringController steering;
    EpisodeRunner runner(*store_, *provider, registry_, steering, config(workspace_));
    EpisodeRunResult result;
    std::thread thread([&] { result = runner.run(); });
    ASSERT_TRUE(waitFor([&] { return steering.state() == AgentState::Tool; }));
    steering.interrupt();
    ASSERT_TRUE(waitFor([&] { return steering.state() == AgentState::Paused; }));
    steering.resume();
    thread.join();
    EXPECT_EQ(result.status, EpisodeStatus::Finished) << result.message;
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 2u);
    // The model is told its command did not finish.
    EXPECT_TRUE(contains(requests[1]["body"]["messages"].dump(), "call_1"));
}
