#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace kwb::test {

// SIGKILLs one of this process's harness descendants (a warm worker's server, a stage child, a
// cold stage, or the bubblewrap around one) at random intervals, as an OOM killer or an operator
// would, until stop().
class HarnessKiller {
public:
    struct Kill {
        std::chrono::system_clock::time_point at;
        int pid = 0;
        // The warm worker's server or the bubblewrap around it (either ends the server), rather
        // than a stage.
        bool workerServer = false;
    };

    HarnessKiller(std::uint32_t seed, std::chrono::milliseconds minInterval,
                  std::chrono::milliseconds maxInterval);
    ~HarnessKiller();
    HarnessKiller(const HarnessKiller&) = delete;
    HarnessKiller& operator=(const HarnessKiller&) = delete;

    // Ends the thread and returns what it killed.
    std::vector<Kill> stop();

private:
    void run();

    std::mt19937 random_;
    std::chrono::milliseconds minInterval_;
    std::chrono::milliseconds maxInterval_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::vector<Kill> kills_;
    std::thread thread_;
};

} // namespace kwb::test
