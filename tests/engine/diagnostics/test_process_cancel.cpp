#include "engine/process/process_runner.h"

#include <gtest/gtest.h>
#include <thread>

using namespace kwb;

TEST(ProcessCancel, StopRequestKillsTheProcessGroup) {
    std::stop_source stop;
    ProcessSpec spec;
    spec.argv = {"sh", "-c", "sleep 30 & sleep 30; echo never"};
    spec.stop = stop.get_token();
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        stop.request_stop();
    });
    ProcessResult r = runProcess(spec);
    canceller.join();
    EXPECT_TRUE(r.cancelled);
    EXPECT_FALSE(r.succeeded());
    EXPECT_LT(r.elapsed.count(), 3000);
    EXPECT_EQ(r.out.text.find("never"), std::string::npos);
    EXPECT_EQ(r.statusText().rfind("cancelled after ", 0), 0u) << r.statusText();
}

TEST(ProcessCancel, UnrequestedStopTokenChangesNothing) {
    std::stop_source stop;
    ProcessSpec spec;
    spec.argv = {"sh", "-c", "echo done"};
    spec.stop = stop.get_token();
    ProcessResult r = runProcess(spec);
    EXPECT_TRUE(r.succeeded()) << r.statusText();
    EXPECT_FALSE(r.cancelled);
    EXPECT_EQ(r.out.text, "done\n");
}
