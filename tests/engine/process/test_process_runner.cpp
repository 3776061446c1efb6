#include "engine/process/process_runner.h"

#include <gtest/gtest.h>

using namespace kwb;

TEST(ProcessRunner, CapturesOutputAndExitCode) {
    ProcessResult r =
        runProcess({{"sh", "-c", "echo out; echo err >&2; exit 3"}, "", {}, {}, 1024, "", {}, {}});
    ASSERT_TRUE(r.started) << r.startError;
    EXPECT_TRUE(r.exitedNormally);
    EXPECT_EQ(r.exitCode, 3);
    EXPECT_EQ(r.out.text, "out\n");
    EXPECT_EQ(r.err.text, "err\n");
    EXPECT_FALSE(r.succeeded());
    EXPECT_EQ(r.statusText(), "exit code 3");
}

TEST(ProcessRunner, MissingExecutableIsAClearError) {
    ProcessResult r = runProcess({{"/nonexistent/python3"}, "", {}, {}, 1024, "", {}, {}});
    EXPECT_FALSE(r.started);
    EXPECT_NE(r.startError.find("not found"), std::string::npos) << r.startError;
}

TEST(ProcessRunner, TimeoutKillsTheWholeProcessGroup) {
    ProcessSpec spec;
    // The grandchild would keep the pipes open forever if only the child were killed.
    spec.argv = {"sh", "-c", "sleep 30 & sleep 30; echo never"};
    spec.timeout = std::chrono::milliseconds(300);
    ProcessResult r = runProcess(spec);
    EXPECT_TRUE(r.timedOut);
    EXPECT_LT(r.elapsed.count(), 5000);
    EXPECT_EQ(r.out.text.find("never"), std::string::npos);
}

TEST(ProcessRunner, FloodIsTruncatedKeepingHeadAndTail) {
    ProcessSpec spec;
    spec.argv = {"sh", "-c", "echo FIRST; yes 0123456789 | head -c 5000000; echo; echo LAST"};
    spec.outputLimitBytes = 4096;
    ProcessResult r = runProcess(spec);
    ASSERT_TRUE(r.succeeded()) << r.statusText();
    EXPECT_TRUE(r.out.truncated);
    EXPECT_GT(r.out.totalBytes, 5000000u);
    EXPECT_LT(r.out.text.size(), 4096u + 100);
    EXPECT_EQ(r.out.text.rfind("FIRST", 0), 0u);
    EXPECT_NE(r.out.text.find("LAST"), std::string::npos);
    EXPECT_NE(r.out.text.find("bytes of output omitted"), std::string::npos);
}

TEST(ProcessRunner, SignalDeathIsReported) {
    ProcessResult r = runProcess({{"sh", "-c", "kill -SEGV $$"}, "", {}, {}, 1024, "", {}, {}});
    EXPECT_FALSE(r.exitedNormally);
    EXPECT_EQ(r.terminatingSignal, 11);
    EXPECT_NE(r.statusText().find("SIGSEGV"), std::string::npos) << r.statusText();
}

TEST(ProcessRunner, StdinEnvironmentAndWorkingDirectory) {
    ProcessSpec spec;
    spec.argv = {"sh", "-c", "cat; printf ' %s ' \"$KWB_PROBE\"; pwd"};
    spec.stdinText = "from-stdin";
    spec.environmentOverrides["KWB_PROBE"] = "value";
    spec.workingDirectory = "/tmp";
    ProcessResult r = runProcess(spec);
    ASSERT_TRUE(r.succeeded()) << r.statusText();
    EXPECT_EQ(r.out.text, "from-stdin value /tmp\n");
}

TEST(ProcessRunner, BadWorkingDirectoryFailsToStart) {
    ProcessSpec spec;
    spec.argv = {"true"};
    spec.workingDirectory = "/nonexistent-dir";
    ProcessResult r = runProcess(spec);
    EXPECT_FALSE(r.started);
    EXPECT_NE(r.startError.find("/nonexistent-dir"), std::string::npos);
}
