// `kwb serve`'s pieces: the request's JSON, the endpoint's folder, and the daemon itself over
// its socket (status, bad requests, a second daemon, an evaluation, a client that goes away).
#include "engine/service/evaluation_request_json.h"
#include "engine/service/line_socket.h"
#include "engine/service/service_client.h"
#include "engine/service/service_server.h"
#include "tests/engine/evaluation_fixture.h"

#include <cstdlib>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>

namespace kwb::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

TEST(EvaluationRequestJson, EveryOptionCrossesUnchanged) {
    EvaluationOptions sent;
    applyEvaluationProfile(sent, EvaluationProfile::KernelBench);
    sent.device = DeviceChoice::Cpu;
    sent.checks = 7;
    sent.iterations = 11;
    sent.targetCv = 0.07;
    sent.timingBudget = 9s;
    sent.stageTimeout = 123s;
    sent.memoryLimitBytes = 5ull << 30;
    sent.headStartMicroseconds = 120.0;
    sent.warmWorker = true;
    sent.standby = false;
    sent.seed = 18446744073709551615ull;
    sent.reward.speedupThreshold = 1.2;
    sent.reward.decideOnInterval = false;
    sent.profile = false;
    sent.counters = CounterCollection{{"SpeedOfLight", "Occupancy"}, "gelu.*", 3, "/tmp/c", false};

    EvaluationOptions received;
    std::string error;
    ASSERT_TRUE(optionsFromJson(json::parse(toJson(sent).dump()), received, &error)) << error;
    EXPECT_EQ(toJson(received), toJson(sent));
    EXPECT_EQ(received.evaluationProfile, EvaluationProfile::KernelBench);
    EXPECT_EQ(received.dtypeTolerances.at("float32"), sent.dtypeTolerances.at("float32"));
    EXPECT_EQ(received.seed, sent.seed);
    EXPECT_EQ(received.headStartMicroseconds, 120.0);
    EXPECT_EQ(received.reward.statistic, TimingStatistic::Mean);
    EXPECT_FALSE(received.sealedCensus); // the kernelbench profile's
    ASSERT_TRUE(received.counters);
    EXPECT_EQ(received.counters->sections, sent.counters->sections);
    EXPECT_EQ(received.counters->kernelRegex, "gelu.*");
    EXPECT_EQ(received.counters->launchCount, 3);
    EXPECT_FALSE(received.counters->ownKernelsOnly);
    // No counters asked for stays none.
    sent.counters.reset();
    EvaluationOptions plain;
    ASSERT_TRUE(optionsFromJson(json::parse(toJson(sent).dump()), plain, &error)) << error;
    EXPECT_FALSE(plain.counters);

    EvaluationTarget target;
    ASSERT_TRUE(
        targetFromJson(toJson(EvaluationTarget::forPair("/r.py", "/c.py")), target, &error));
    EXPECT_EQ(target.referencePath, "/r.py");
    EXPECT_EQ(target.candidatePath, "/c.py");
}

TEST(EvaluationRequestJson, AMalformedValueIsNamedNotDefaulted) {
    const std::pair<json, std::string> cases[] = {
        {{{"checks", "five"}}, "checks"},
        {{{"iterations", 1e300}}, "iterations"},
        {{{"device", "tpu"}}, "device"},
        {{{"evaluation_profile", "fastest"}}, "evaluation_profile"},
        {{{"target_cv", -1}}, "target_cv"},
        {{{"stage_timeout_s", 0}}, "stage_timeout_s"},
        {{{"dtype_tolerances", {{"float32", "tiny"}}}}, "dtype_tolerances.float32"},
        {{{"seed", -3}}, "seed"},
        {{{"speedup_statistic", "mode"}}, "speedup_statistic"},
        // A section name that ncu could read as an option never reaches its command line.
        {{{"counters", {{"sections", {"--launch-skip"}}}}}, "counters.sections"},
        {{{"counters", {{"launch_count", 0}}}}, "counters:"},
    };
    for (const auto& [options, key] : cases) {
        EvaluationOptions received;
        std::string error;
        EXPECT_FALSE(optionsFromJson(options, received, &error)) << options.dump();
        EXPECT_EQ(error.rfind(key, 0), 0u) << error;
    }
    EvaluationTarget target;
    std::string error;
    EXPECT_FALSE(targetFromJson(json::object(), target, &error));
    EXPECT_FALSE(targetFromJson(json::array(), target, &error));
}

// Each test gets its own runtime folder, so its daemon's socket is its own.
class ServiceDaemonTest : public EvaluationTest {
protected:
    void SetUp() override {
        EvaluationTest::SetUp();
        runtime_ = root_ / "runtime";
        fs::create_directories(runtime_);
        fs::permissions(runtime_, fs::perms::owner_all, fs::perm_options::replace);
        const char* old = std::getenv("XDG_RUNTIME_DIR");
        oldRuntime_ = old ? std::optional<std::string>(old) : std::nullopt;
        ::setenv("XDG_RUNTIME_DIR", runtime_.c_str(), 1);
    }
    void TearDown() override {
        if (oldRuntime_)
            ::setenv("XDG_RUNTIME_DIR", oldRuntime_->c_str(), 1);
        else
            ::unsetenv("XDG_RUNTIME_DIR");
        EvaluationTest::TearDown();
    }

    ServeConfig config(std::chrono::seconds idleExit = 0s) const {
        ServeConfig c;
        c.fingerprint = serviceFingerprint("");
        c.endpoint = serviceEndpoint(c.fingerprint);
        c.idleExit = idleExit;
        c.service.concurrentEvaluations = 1;
        c.service.gpuCount = 0;
        return c;
    }

    // A raw connection, for what a well-behaved client never sends.
    int connectRaw(const ServiceEndpoint& e) const {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, e.socketPath.c_str(), sizeof address.sun_path - 1);
        EXPECT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
        return fd;
    }

    fs::path runtime_;
    std::optional<std::string> oldRuntime_;
};

TEST_F(ServiceDaemonTest, TheEndpointFolderMustBeTheUsersAlone) {
    const ServiceEndpoint e = serviceEndpoint("abc");
    EXPECT_EQ(fs::path(e.directory).parent_path(), runtime_);
    EXPECT_EQ(prepareEndpointDirectory(e), "");
    EXPECT_EQ(fs::status(e.directory).permissions() & fs::perms::all, fs::perms::owner_all);
    fs::permissions(e.directory, fs::perms::group_write | fs::perms::others_read,
                    fs::perm_options::add);
    EXPECT_NE(prepareEndpointDirectory(e).find("open to other users"), std::string::npos);
    fs::remove_all(e.directory);
    fs::create_directory_symlink(root_, e.directory);
    EXPECT_NE(prepareEndpointDirectory(e).find("not a folder"), std::string::npos);
}

TEST_F(ServiceDaemonTest, AnotherConfigurationGetsAnotherDaemon) {
    const std::string before = serviceFingerprint("");
    EXPECT_EQ(serviceFingerprint(""), before);
    EXPECT_NE(serviceFingerprint("/usr/bin/python3"), before);
    ::setenv("KWB_SANDBOX_TEST_KNOB", "1", 1);
    EXPECT_NE(serviceFingerprint(""), before);
    ::unsetenv("KWB_SANDBOX_TEST_KNOB");
    EXPECT_EQ(serviceFingerprint(""), before);
}

TEST_F(ServiceDaemonTest, StatusBadRequestsASecondDaemonAndStop) {
    const ServeConfig c = config();
    ServiceServer server(c);
    std::string error;
    ASSERT_EQ(server.listen(&error), ServiceServer::Listen::Listening) << error;
    struct stat st {};
    ASSERT_EQ(::stat(c.endpoint.socketPath.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << "the socket is the owner's alone";
    std::string reason;
    std::jthread loop([&] { reason = server.run(); });

    ServiceServer second(c);
    EXPECT_EQ(second.listen(&error), ServiceServer::Listen::AlreadyRunning);
    EXPECT_NE(error.find("already serves"), std::string::npos);

    const ServiceClient client(c.endpoint);
    const ServiceReply status = client.call({{"op", "status"}});
    ASSERT_TRUE(status.reached) << status.error;
    EXPECT_EQ(status.value["status"]["pid"], ::getpid());
    EXPECT_EQ(status.value["status"]["fingerprint"], c.fingerprint);
    EXPECT_EQ(status.value["status"]["concurrent_evaluations"], c.service.concurrentEvaluations);

    EXPECT_NE(client.call({{"op", "dance"}}).error.find("unknown op"), std::string::npos);
    EXPECT_NE(client.call({{"op", "eval"}, {"target", {{"workspace", 3}}}}).error.find("workspace"),
              std::string::npos);
    {
        LineSocket raw(connectRaw(c.endpoint));
        ASSERT_TRUE(raw.send("not an object"));
        std::string line;
        ASSERT_EQ(raw.readLine(line, 10s, 1 << 20), LineSocket::Read::Line);
        EXPECT_NE(line.find("not a JSON object"), std::string::npos) << line;
    }
    {
        // 300 levels of nesting: refused, and the daemon goes on.
        LineSocket raw(connectRaw(c.endpoint));
        std::string deep(300, '[');
        deep += std::string(300, ']') + "\n";
        ASSERT_EQ(::send(raw.fd(), deep.data(), deep.size(), MSG_NOSIGNAL),
                  static_cast<ssize_t>(deep.size()));
        std::string line;
        ASSERT_EQ(raw.readLine(line, 10s, 1 << 20), LineSocket::Read::Line);
        EXPECT_NE(line.find("error"), std::string::npos) << line;
    }
    EXPECT_TRUE(client.reachable());

    EXPECT_EQ(client.call({{"op", "stop"}}).value["stopping"], true);
    loop.join();
    EXPECT_EQ(reason, "stop request");
}

TEST_F(ServiceDaemonTest, AnEvaluationComesBackAsTheRecordWithItsProgress) {
    const fs::path good = makePythonWorkspace(
        kTinyTask, tinyCandidate("        return x * self.weight * self.factor"), "good");
    const ServeConfig c = config();
    ServiceServer server(c);
    ASSERT_EQ(server.listen(nullptr), ServiceServer::Listen::Listening);
    std::jthread loop([&] { server.run(); });

    std::vector<std::string> stages;
    const ServiceClient client(c.endpoint);
    const ServiceReply reply =
        client.call({{"op", "eval"},
                     {"target", toJson(EvaluationTarget::forWorkspace(good.string()))},
                     {"options", toJson(cpuOptions())}},
                    [&](const std::string& stage) { stages.push_back(stage); });
    ASSERT_TRUE(reply.error.empty()) << reply.error;
    EvaluationResult result;
    ASSERT_TRUE(fromJson(reply.value["result"], result));
    // A pure-torch candidate: correct, then rejected as a fallback, as in this process.
    EXPECT_TRUE(result.correct) << describe(result);
    ASSERT_FALSE(result.stages.empty());
    EXPECT_EQ(result.stages.front().name, "queue");
    EXPECT_NE(std::find(stages.begin(), stages.end(), "verify"), stages.end());
    EXPECT_NE(std::find(stages.begin(), stages.end(), "profile"), stages.end());
    client.call({{"op", "stop"}});
}

TEST_F(ServiceDaemonTest, AClientThatGoesAwayCancelsItsEvaluationAndIdleEndsTheDaemon) {
    const fs::path slow = makePythonWorkspace(
        kTinyTask,
        tinyCandidate("        time.sleep(120)\n        return x * self.weight * self.factor",
                      "import time\n"),
        "slow");
    const ServeConfig c = config(3s);
    ServiceServer server(c);
    ASSERT_EQ(server.listen(nullptr), ServiceServer::Listen::Listening);
    std::string reason;
    std::jthread loop([&] { reason = server.run(); });
    const ServiceClient client(c.endpoint);
    {
        LineSocket raw(connectRaw(c.endpoint));
        ASSERT_TRUE(raw.send({{"op", "eval"},
                              {"target", toJson(EvaluationTarget::forWorkspace(slow.string()))},
                              {"options", toJson(cpuOptions())}}));
        std::string line;
        bool verifying = false;
        while (!verifying && raw.readLine(line, 120s, 1 << 20) == LineSocket::Read::Line)
            verifying = line.find("\"verify\"") != std::string::npos;
        ASSERT_TRUE(verifying);
        std::this_thread::sleep_for(1s); // the candidate sleeps inside the verify stage now
        EXPECT_EQ(client.call({{"op", "status"}}).value["status"]["running"], 1);
    } // the connection closes here, as when `kwb eval` is interrupted
    const auto closed = std::chrono::steady_clock::now();
    loop.join(); // nothing runs any more, so the idle time ends the daemon
    EXPECT_EQ(reason, "idle");
    EXPECT_LT(std::chrono::steady_clock::now() - closed, 60s)
        << "the evaluation was cancelled instead of sleeping out its 120 s";
}

} // namespace
} // namespace kwb::test
