#pragma once

#include "engine/diagnostics/kernel_check.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

namespace kwb::diagnostics {

// Compiles the files being edited in the background, newest request wins: each submit replaces
// what is waiting for that file and cancels its compile in flight (NVRTC's flow callback, or
// killing nvcc's process group), and only a result whose generation is still the newest for its
// file is delivered. One worker thread, one compile at a time.
//
// With `syntaxFirst` a device-code file is checked in two steps under one generation: NVRTC's
// front end alone (a result with syntaxOnly set: the diagnostics, fast), then, when that found
// no error and nothing newer arrived, the full compile (PTX, resources). A file with errors, or
// one that takes nvcc, gets a single, final delivery.
class DiagnosticsService {
public:
    // Called on the worker thread, never under the service's lock. `generation` is the value
    // submit() returned for the request this result answers.
    using Callback = std::function<void(const std::string& path, std::uint64_t generation,
                                        std::shared_ptr<const KernelCheckResult> result)>;
    using CheckFunction =
        std::function<KernelCheckResult(const KernelCheckRequest&, std::stop_token)>;

    struct Options {
        // A compile starts once its file has been quiet this long, so a burst of keystrokes
        // costs one compile. 0 starts at once (tests).
        std::chrono::milliseconds debounce{150};
        bool syntaxFirst = true;
        bool wantSass = false;
        std::vector<std::string> includeDirs;
        CheckFunction check = checkKernelSource; // replaceable for tests
    };

    explicit DiagnosticsService(Callback callback);
    DiagnosticsService(Callback callback, Options options);
    ~DiagnosticsService(); // cancels the compile in flight and drops waiting requests
    DiagnosticsService(const DiagnosticsService&) = delete;
    DiagnosticsService& operator=(const DiagnosticsService&) = delete;

    // Returns at once with the request's generation (increasing across all files).
    std::uint64_t submit(const std::string& path, const std::string& text,
                         const std::string& arch = {});

    // Blocks until nothing waits and nothing compiles (tests, benchmarks).
    void waitIdle();

    // Requests taken up by the worker (one or two compiles each), and compiles that ended
    // cancelled, since construction.
    std::uint64_t startedCount() const;
    std::uint64_t cancelledCount() const;

private:
    struct Pending {
        std::uint64_t generation = 0;
        std::string text;
        std::string arch;
        std::chrono::steady_clock::time_point readyAt;
    };
    void run(std::stop_token threadStop);

    Callback callback_;
    Options options_;
    mutable std::mutex mutex_;
    std::condition_variable_any wake_;
    std::condition_variable_any idle_;
    std::map<std::string, Pending> pending_;      // per file, the newest waiting request
    std::map<std::string, std::uint64_t> latest_; // per file, the newest generation submitted
    std::string runningPath_;
    std::unique_ptr<std::stop_source> runningStop_;
    std::uint64_t nextGeneration_ = 1;
    std::uint64_t started_ = 0;
    std::uint64_t cancelled_ = 0;
    std::jthread thread_; // last member: started after, and joined before, the state above
};

} // namespace kwb::diagnostics
