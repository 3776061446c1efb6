#pragma once

#include <atomic>
#include <csignal>
#include <stop_token>

namespace kwb::cli {

// While one lives, Ctrl+C (SIGINT) and SIGTERM request a stop on `source`: the handler only
// requests it, the command's workers see it and end what they run cleanly (a rollout's episodes
// as stopped, a tuning run after the sample in hand). Afterwards both signals act as by default.
class StopOnSignals {
public:
    explicit StopOnSignals(std::stop_source& source) {
        active() = &source;
        std::signal(SIGINT, requestStop);
        std::signal(SIGTERM, requestStop);
    }
    ~StopOnSignals() {
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
        active() = nullptr;
    }
    StopOnSignals(const StopOnSignals&) = delete;
    StopOnSignals& operator=(const StopOnSignals&) = delete;

private:
    static std::atomic<std::stop_source*>& active() {
        static std::atomic<std::stop_source*> source{nullptr};
        return source;
    }
    static void requestStop(int) {
        if (std::stop_source* source = active().load())
            source->request_stop();
    }
};

} // namespace kwb::cli
