#pragma once

#include <cstdint>

namespace kwb {

// Kernel-enforced limits for a child (setrlimit after fork). Zero means "inherit".
struct ResourceLimits {
    std::uint64_t cpuSeconds = 0;
    std::uint64_t addressSpaceBytes = 0;
    // Per user: not enforced for root, so sandboxes add a PID namespace and callers a watchdog.
    std::uint64_t maxProcesses = 0;
    std::uint64_t openFiles = 0;
    std::uint64_t fileSizeBytes = 0;
};

// setrlimit for every non-zero limit. Called in a forked child before exec, so it uses only
// async-signal-safe calls.
void applyLimits(const ResourceLimits& limits);

} // namespace kwb
