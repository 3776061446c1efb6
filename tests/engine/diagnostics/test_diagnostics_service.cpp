#include "engine/diagnostics/diagnostics_service.h"
#include "tests/engine/diagnostics/slow_kernel_source.h"

#include <atomic>
#include <gtest/gtest.h>
#include <mutex>
#include <vector>

using namespace kwb;
using namespace kwb::diagnostics;
using Clock = std::chrono::steady_clock;

namespace {

struct Delivered {
    std::string path;
    std::uint64_t generation;
    std::shared_ptr<const KernelCheckResult> result;
};

// Collects what the service delivers (on its worker thread).
struct Inbox {
    std::mutex mutex;
    std::vector<Delivered> items;
    DiagnosticsService::Callback callback() {
        return [this](const std::string& path, std::uint64_t generation,
                      std::shared_ptr<const KernelCheckResult> result) {
            std::lock_guard lock(mutex);
            items.push_back({path, generation, std::move(result)});
        };
    }
};

std::string kernelWithValue(int value) {
    return "extern \"C\" __global__ void k(int* x) { x[threadIdx.x] = " + std::to_string(value) +
           "; }\n";
}

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One full compile per request, at once.
DiagnosticsService::Options immediate() {
    DiagnosticsService::Options options;
    options.debounce = std::chrono::milliseconds(0);
    options.syntaxFirst = false;
    return options;
}

} // namespace

TEST(DiagnosticsService, RapidSubmitsDeliverOnlyTheLast) {
    Inbox inbox;
    DiagnosticsService service(inbox.callback(), immediate());
    std::uint64_t last = 0;
    for (int i = 0; i < 20; ++i)
        last = service.submit("ws/kernels/k.cu", kernelWithValue(i), "sm_90");
    service.waitIdle();

    std::lock_guard lock(inbox.mutex);
    ASSERT_EQ(inbox.items.size(), 1u);
    EXPECT_EQ(inbox.items[0].generation, last);
    EXPECT_EQ(inbox.items[0].path, "ws/kernels/k.cu");
    ASSERT_TRUE(inbox.items[0].result->success) << inbox.items[0].result->log;
    // The PTX is the last text's: it stores 19.
    EXPECT_NE(inbox.items[0].result->ptx.find("19;"), std::string::npos);
    EXPECT_LT(service.startedCount(), 20u);
}

TEST(DiagnosticsService, DebounceCoalescesABurstIntoOneCompile) {
    Inbox inbox;
    DiagnosticsService::Options options = immediate();
    options.debounce = std::chrono::milliseconds(150);
    DiagnosticsService service(inbox.callback(), options);
    for (int i = 0; i < 5; ++i) {
        service.submit("k.cu", kernelWithValue(i), "sm_90");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    service.waitIdle();
    EXPECT_EQ(service.startedCount(), 1u);
    std::lock_guard lock(inbox.mutex);
    ASSERT_EQ(inbox.items.size(), 1u);
    EXPECT_NE(inbox.items[0].result->ptx.find("4;"), std::string::npos);
}

TEST(DiagnosticsService, SyntaxFirstDeliversDiagnosticsThenResources) {
    Inbox inbox;
    DiagnosticsService::Options options = immediate();
    options.syntaxFirst = true;
    DiagnosticsService service(inbox.callback(), options);

    const std::uint64_t clean = service.submit("k.cu", kernelWithValue(5), "sm_90");
    service.waitIdle();
    {
        std::lock_guard lock(inbox.mutex);
        ASSERT_EQ(inbox.items.size(), 2u);
        const auto& quick = *inbox.items[0].result;
        const auto& full = *inbox.items[1].result;
        EXPECT_EQ(inbox.items[0].generation, clean);
        EXPECT_EQ(inbox.items[1].generation, clean);
        EXPECT_TRUE(quick.syntaxOnly);
        EXPECT_TRUE(quick.success);
        EXPECT_TRUE(quick.kernels.empty());
        EXPECT_TRUE(quick.ptx.empty());
        EXPECT_FALSE(full.syntaxOnly);
        ASSERT_EQ(full.kernels.size(), 1u);
        EXPECT_GT(full.kernels[0].registers, 0);
        inbox.items.clear();
    }

    // Errors found by the front end are final: the full compile would only repeat them.
    service.submit("k.cu", "__global__ void k(int* x) {\n    x[0] = nope;\n}\n", "sm_90");
    service.waitIdle();
    {
        std::lock_guard lock(inbox.mutex);
        ASSERT_EQ(inbox.items.size(), 1u);
        const auto& broken = *inbox.items[0].result;
        EXPECT_TRUE(broken.syntaxOnly);
        ASSERT_EQ(broken.errorCount(), 1) << broken.log;
        EXPECT_EQ(formatDiagnostic(broken.diagnostics[0]),
                  "k.cu:2:12: error: identifier \"nope\" is undefined");
        inbox.items.clear();
    }

    // A file that takes nvcc has no syntax-only step.
    service.submit("host.cu",
                   "#include <cuda_runtime.h>\n" + kernelWithValue(3) +
                       "void launch(int* x) { k<<<1, 32>>>(x); }\n",
                   "sm_90");
    service.waitIdle();
    std::lock_guard lock(inbox.mutex);
    ASSERT_EQ(inbox.items.size(), 1u);
    EXPECT_FALSE(inbox.items[0].result->syntaxOnly);
    EXPECT_EQ(inbox.items[0].result->compilePath, CompilePath::Nvcc);
    EXPECT_EQ(inbox.items[0].result->kernels.size(), 1u);
}

TEST(DiagnosticsService, FilesDoNotCancelEachOther) {
    Inbox inbox;
    DiagnosticsService service(inbox.callback(), immediate());
    service.submit("a.cu", kernelWithValue(1), "sm_90");
    service.submit("b.cu", kernelWithValue(2), "sm_90");
    service.waitIdle();
    std::lock_guard lock(inbox.mutex);
    ASSERT_EQ(inbox.items.size(), 2u);
    EXPECT_NE(inbox.items[0].path, inbox.items[1].path);
}

// A newer submit stops the stale NVRTC compile through the flow callback: it ends long before
// the same compile runs to completion, and only the newer result arrives.
TEST(DiagnosticsService, NewerSubmitCancelsASlowNvrtcCompileEarly) {
    const std::string slow = test::slowKernelSource(24);
    const auto fullStart = Clock::now();
    KernelCheckRequest full;
    full.path = "slow.cu";
    full.text = slow;
    full.arch = "sm_90";
    ASSERT_TRUE(checkKernelSource(full).success);
    const double fullMs = msSince(fullStart);

    std::atomic<double> slowCheckMs{-1};
    std::atomic<bool> slowCancelled{false};
    DiagnosticsService::Options options = immediate();
    options.check = [&](const KernelCheckRequest& request, std::stop_token stop) {
        const auto start = Clock::now();
        KernelCheckResult result = checkKernelSource(request, stop);
        if (request.text == slow) {
            slowCheckMs = msSince(start);
            slowCancelled = result.cancelled;
        }
        return result;
    };
    Inbox inbox;
    DiagnosticsService service(inbox.callback(), options);
    service.submit("slow.cu", slow, "sm_90");
    while (service.startedCount() == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::uint64_t newest = service.submit("slow.cu", kernelWithValue(7), "sm_90");
    service.waitIdle();

    EXPECT_TRUE(slowCancelled.load());
    EXPECT_LT(slowCheckMs.load(), 0.6 * fullMs)
        << "cancelled after " << slowCheckMs.load() << " ms; a full compile takes " << fullMs;
    EXPECT_EQ(service.cancelledCount(), 1u);
    std::lock_guard lock(inbox.mutex);
    ASSERT_EQ(inbox.items.size(), 1u);
    EXPECT_EQ(inbox.items[0].generation, newest);
    EXPECT_TRUE(inbox.items[0].result->success);
}

TEST(DiagnosticsService, ShutsDownCleanlyWithACompileInFlight) {
    const std::string slow = test::slowKernelSource(24);
    const auto fullStart = Clock::now();
    KernelCheckRequest full;
    full.path = "slow.cu";
    full.text = slow;
    full.arch = "sm_90";
    ASSERT_TRUE(checkKernelSource(full).success);
    const double fullMs = msSince(fullStart);

    Inbox inbox;
    std::atomic<bool> sawCancel{false};
    DiagnosticsService::Options options = immediate();
    options.check = [&](const KernelCheckRequest& request, std::stop_token stop) {
        KernelCheckResult result = checkKernelSource(request, stop);
        sawCancel = result.cancelled;
        return result;
    };
    const auto start = Clock::now();
    {
        DiagnosticsService service(inbox.callback(), options);
        service.submit("slow.cu", slow, "sm_90");
        service.submit("other.cu", kernelWithValue(1), "sm_90"); // waiting: dropped
        while (service.startedCount() == 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(sawCancel.load());
    // The destructor waited only for NVRTC's next stage, not for the whole compile.
    EXPECT_LT(msSince(start), 0.6 * fullMs) << "a full compile takes " << fullMs << " ms";
    std::lock_guard lock(inbox.mutex);
    EXPECT_TRUE(inbox.items.empty());
}

TEST(DiagnosticsService, NvccCompileIsKilledByANewerSubmit) {
    Inbox inbox;
    std::atomic<bool> nvccCancelled{false};
    std::atomic<double> nvccMs{-1};
    DiagnosticsService::Options options = immediate();
    options.check = [&](const KernelCheckRequest& request, std::stop_token stop) {
        const auto start = Clock::now();
        KernelCheckResult result = checkKernelSource(request, stop);
        if (result.compilePath == CompilePath::Nvcc) {
            nvccCancelled = result.cancelled;
            nvccMs = msSince(start);
        }
        return result;
    };
    DiagnosticsService service(inbox.callback(), options);
    const std::string hostFile = "#include <cuda_runtime.h>\n" + kernelWithValue(3) +
                                 "void launch(int* x) { k<<<1, 32>>>(x); }\n";
    service.submit("host.cu", hostFile, "sm_90");
    while (service.startedCount() == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    service.submit("host.cu", kernelWithValue(4), "sm_90");
    service.waitIdle();
    EXPECT_TRUE(nvccCancelled.load());
    EXPECT_LT(nvccMs.load(), 1000); // nvcc alone takes 1.5 s or more on this machine class
    std::lock_guard lock(inbox.mutex);
    ASSERT_EQ(inbox.items.size(), 1u);
    EXPECT_EQ(inbox.items[0].result->compilePath, CompilePath::Nvrtc);
}
