#pragma once
// Counts the bytes that libtorch holds on the CPU while installed: what a test needs to compare
// the memory two ways of computing the same thing keep (torch's own statistics cover GPUs only).
#include <algorithm>
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace kwb::torchnn::testing {

class CountingCpuAllocator final : public c10::Allocator {
public:
    // Installs the counter as libtorch's CPU allocator until the scope ends. The counter itself
    // lives for the whole process: a tensor allocated through it may be freed after the scope.
    class Installed {
    public:
        Installed() : previous_(c10::GetCPUAllocator()) {
            counter().reset();
            c10::SetCPUAllocator(&counter(), kPriority);
        }
        ~Installed() { c10::SetCPUAllocator(previous_, kPriority); }
        Installed(const Installed&) = delete;
        Installed& operator=(const Installed&) = delete;

        std::int64_t current() const { return counter().current(); }
        std::int64_t peak() const { return counter().peak(); }
        // From now on the peak is counted from what is held now.
        void resetPeak() { counter().resetPeak(); }

    private:
        at::Allocator* previous_;
    };

    // A "simple" data pointer (its context is the data, its deleter a plain function), as
    // libtorch's own CPU allocator gives and as some kernels require (raw_allocate); the sizes
    // are looked up by address.
    c10::DataPtr allocate(std::size_t bytes) override {
        void* data = c10::GetDefaultCPUAllocator()->raw_allocate(bytes);
        if (data) {
            const std::lock_guard lock(mutex_);
            sizes_[data] = static_cast<std::int64_t>(bytes);
            current_ += static_cast<std::int64_t>(bytes);
            peak_ = std::max(peak_, current_);
        }
        return {data, data, &CountingCpuAllocator::release, c10::Device(c10::DeviceType::CPU)};
    }

    c10::DeleterFnPtr raw_deleter() const override { return &CountingCpuAllocator::release; }

    void copy_data(void* dest, const void* src, std::size_t count) const override {
        default_copy_data(dest, src, count);
    }

private:
    // Above any priority libtorch registers its own CPU allocators with.
    static constexpr std::uint8_t kPriority = 200;

    static CountingCpuAllocator& counter() {
        static auto* instance = new CountingCpuAllocator; // never destroyed; see Installed
        return *instance;
    }

    static void release(void* data) {
        if (!data)
            return;
        CountingCpuAllocator& self = counter();
        {
            const std::lock_guard lock(self.mutex_);
            if (const auto found = self.sizes_.find(data); found != self.sizes_.end()) {
                self.current_ -= found->second;
                self.sizes_.erase(found);
            }
        }
        c10::GetDefaultCPUAllocator()->raw_deleter()(data);
    }

    // Forgets what earlier installations counted: freeing it later changes nothing here.
    void reset() {
        const std::lock_guard lock(mutex_);
        sizes_.clear();
        current_ = peak_ = 0;
    }
    void resetPeak() {
        const std::lock_guard lock(mutex_);
        peak_ = current_;
    }
    std::int64_t current() const {
        const std::lock_guard lock(mutex_);
        return current_;
    }
    std::int64_t peak() const {
        const std::lock_guard lock(mutex_);
        return peak_;
    }

    mutable std::mutex mutex_;
    std::unordered_map<void*, std::int64_t> sizes_;
    std::int64_t current_ = 0, peak_ = 0;
};

} // namespace kwb::torchnn::testing
