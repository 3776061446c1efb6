// The one way kwb starts a child: every caller (runProcess, LineProcess, the agent's shell)
// gets the same process group, signal state, descriptors and start errors.
#include "engine/process/line_process.h"
#include "engine/process/process_runner.h"
#include "engine/process/process_spawn.h"

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <pthread.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace kwb;
namespace fs = std::filesystem;

namespace {

// A descriptor the parent opened without O_CLOEXEC, as a careless library would.
class LeakyDescriptor {
public:
    LeakyDescriptor() : fd_(open("/dev/null", O_RDONLY)) {}
    ~LeakyDescriptor() { close(fd_); }
    int fd() const { return fd_; }

private:
    int fd_;
};

// The parent blocks SIGUSR1 and ignores SIGINT while the child starts, as the CLI's signal
// handling and Qt's event loop may; the child must start from the defaults.
class UnusualSignalState {
public:
    UnusualSignalState() {
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        pthread_sigmask(SIG_BLOCK, &usr1, &oldMask_);
        oldInt_ = signal(SIGINT, SIG_IGN);
    }
    ~UnusualSignalState() {
        signal(SIGINT, oldInt_);
        pthread_sigmask(SIG_SETMASK, &oldMask_, nullptr);
    }

private:
    sigset_t oldMask_{};
    sighandler_t oldInt_{};
};

// Prints, from inside the child: its blocked and ignored signal masks, whether descriptor `fd`
// is open, and whether it leads its own process group.
std::vector<std::string> probeCommand(int fd) {
    // The masks are read by grep from its own status after `exec` (the shell's mask, with no
    // fork in between): a shell waiting for a child blocks every signal while it waits, so
    // reading the waiting shell's status would be a race.
    return {"sh", "-c",
            "if [ -e /proc/$$/fd/" + std::to_string(fd) +
                " ]; then echo fd-open; else echo fd-closed; fi; "
                "[ \"$(cut -d' ' -f5 /proc/$$/stat)\" = \"$$\" ] && echo group-leader; "
                "exec grep -E '^Sig(Blk|Ign)' /proc/self/status"};
}

void expectCleanStart(const std::string& output) {
    // SIGUSR1 is bit 9 (value 0x200) and SIGINT bit 1 (0x2): neither blocked nor ignored.
    EXPECT_NE(output.find("SigBlk:\t0000000000000000"), std::string::npos) << output;
    const auto ign = output.find("SigIgn:\t");
    ASSERT_NE(ign, std::string::npos) << output;
    const unsigned long long ignored = std::stoull(output.substr(ign + 8, 16), nullptr, 16);
    EXPECT_EQ(ignored & 0x2ull, 0ull) << output;
    EXPECT_NE(output.find("fd-closed"), std::string::npos) << output;
    EXPECT_NE(output.find("group-leader"), std::string::npos) << output;
}

} // namespace

TEST(ProcessSpawn, RunProcessChildrenStartClean) {
    LeakyDescriptor leaky;
    UnusualSignalState signals;
    ProcessSpec spec;
    spec.argv = probeCommand(leaky.fd());
    const ProcessResult r = runProcess(spec);
    ASSERT_TRUE(r.succeeded()) << r.statusText() << r.err.text;
    expectCleanStart(r.out.text);
}

TEST(ProcessSpawn, LineProcessChildrenStartClean) {
    LeakyDescriptor low, leaky; // `leaky` lies above descriptor 3, which the channel takes
    ASSERT_GT(leaky.fd(), 3);
    UnusualSignalState signals;
    const fs::path log = fs::temp_directory_path() / ("kwb-spawn-" + std::to_string(getpid()));
    ProcessSpec spec;
    std::vector<std::string> probe = probeCommand(leaky.fd());
    // The marker comes first: the probe ends with exec. Requests and replies travel on the
    // socket at descriptor 3; stdin is /dev/null and stdout goes to the log.
    probe[2] = "exec 1>&3; read line <&3; echo start; "
               "[ -S /proc/$$/fd/3 ] && echo channel-is-a-socket; "
               "[ \"$(readlink /proc/$$/fd/0)\" = /dev/null ] && echo stdin-is-null; " +
               probe[2];
    spec.argv = probe;
    LineProcess process;
    std::string error;
    ASSERT_TRUE(process.start(spec, log.string(), &error)) << error;
    ASSERT_TRUE(process.writeLine("go"));
    std::string output;
    while (auto line = process.readLine(std::chrono::seconds(10)))
        output += *line + "\n";
    expectCleanStart(output);
    EXPECT_NE(output.find("start\nchannel-is-a-socket\nstdin-is-null\n"), std::string::npos)
        << output;
    fs::remove(log);
}

TEST(ProcessSpawn, LineProcessEndsAChannelFloodedWithoutANewline) {
    // What writes megabytes without a newline is not the server speaking the protocol: the
    // reader gives up after kMaxLineBytes instead of buffering (and rescanning) it all.
    const fs::path log = fs::temp_directory_path() / ("kwb-flood-" + std::to_string(getpid()));
    ProcessSpec spec;
    spec.argv = {"sh", "-c", "echo first >&3; head -c 100000000 /dev/zero >&3; sleep 30"};
    LineProcess process;
    std::string error;
    ASSERT_TRUE(process.start(spec, log.string(), &error)) << error;
    EXPECT_EQ(process.readLine(std::chrono::seconds(10)).value_or(""), "first");
    EXPECT_FALSE(process.readLine(std::chrono::seconds(60)));
    EXPECT_TRUE(process.ended());
    // Still sleeping: the channel ended on the flood, not on the child's exit.
    EXPECT_TRUE(process.running());
    process.kill();
    fs::remove(log);
}

TEST(ProcessSpawn, StartFailuresSayWhatFailed) {
    SpawnSpec missing;
    missing.argv = {"kwb-no-such-program"};
    EXPECT_NE(spawnProcess(missing).error.find("not found"), std::string::npos);

    SpawnSpec badDirectory;
    badDirectory.argv = {"true"};
    badDirectory.workingDirectory = "/nonexistent/kwb-folder";
    const Spawned inMissingFolder = spawnProcess(badDirectory);
    EXPECT_FALSE(inMissingFolder);
    EXPECT_NE(inMissingFolder.error.find("cannot enter /nonexistent/kwb-folder"), std::string::npos)
        << inMissingFolder.error;

    // An executable file that is no program: exec itself refuses it.
    const fs::path script =
        fs::temp_directory_path() / ("kwb-not-a-program-" + std::to_string(getpid()));
    std::ofstream(script) << "\x7f"
                             "ELF garbage";
    fs::permissions(script, fs::perms::owner_all);
    SpawnSpec garbage;
    garbage.argv = {script.string()};
    const Spawned refused = spawnProcess(garbage);
    EXPECT_FALSE(refused);
    EXPECT_NE(refused.error.find("cannot start " + script.string()), std::string::npos)
        << refused.error;
    fs::remove(script);

    // LineProcess reports the same errors instead of a worker that exits at once.
    ProcessSpec spec;
    spec.argv = {"true"};
    spec.workingDirectory = "/nonexistent/kwb-folder";
    LineProcess process;
    std::string error;
    EXPECT_FALSE(process.start(spec, "/dev/null", &error));
    EXPECT_NE(error.find("cannot enter"), std::string::npos) << error;
}

TEST(ProcessSpawn, LimitsAndEnvironmentAreTheChildsOwn) {
    int out[2];
    ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
    SpawnSpec spec;
    spec.argv = {"sh", "-c", "ulimit -n; echo \"$ONLY\"; env | wc -l"};
    spec.environment = {"ONLY=this", "PATH=/usr/bin:/bin"};
    spec.limits.openFiles = 77;
    spec.stdoutFd = out[1];
    const Spawned child = spawnProcess(spec);
    close(out[1]);
    ASSERT_TRUE(child) << child.error;
    std::string text;
    char buffer[256];
    for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) > 0;)
        text.append(buffer, static_cast<std::size_t>(n));
    close(out[0]);
    int status = 0;
    waitpid(child.pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    // sh adds PWD (and may add SHLVL and _) to what it was given; nothing of ours leaks in.
    EXPECT_EQ(text.rfind("77\nthis\n", 0), 0u) << text;
    EXPECT_LE(std::stoi(text.substr(8)), 5) << text;
}
