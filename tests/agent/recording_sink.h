#pragma once

#include "agent/llm/stream_sink.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kwb::agent::test_support {

// Keeps everything a provider streams, and lets another thread wait for the first text.
class RecordingSink : public StreamSink {
public:
    struct ToolStart {
        int index;
        std::string id;
        std::string name;
    };
    struct Retry {
        int nextAttempt;
        std::chrono::milliseconds delay;
        LlmError reason;
    };

    void onTextDelta(std::string_view delta) override {
        std::lock_guard lock(mutex_);
        text += delta;
        ++textDeltas;
        changed_.notify_all();
    }
    void onToolCallStart(int index, const std::string& id, const std::string& name) override {
        std::lock_guard lock(mutex_);
        toolStarts.push_back({index, id, name});
    }
    void onToolCallArgumentsDelta(int index, std::string_view fragment) override {
        std::lock_guard lock(mutex_);
        toolArguments[index] += fragment;
    }
    void onRetry(int nextAttempt, std::chrono::milliseconds delay,
                 const LlmError& reason) override {
        std::lock_guard lock(mutex_);
        retries.push_back({nextAttempt, delay, reason});
        changed_.notify_all();
    }

    bool waitForText(std::chrono::milliseconds timeout) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, timeout, [&] { return textDeltas > 0; });
    }
    bool waitForRetry(std::chrono::milliseconds timeout) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, timeout, [&] { return !retries.empty(); });
    }

    std::string text;
    int textDeltas = 0;
    std::vector<ToolStart> toolStarts;
    std::map<int, std::string> toolArguments;
    std::vector<Retry> retries;

private:
    std::mutex mutex_;
    std::condition_variable changed_;
};

} // namespace kwb::agent::test_support
