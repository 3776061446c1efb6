#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kwb {

// The lowest memory limit a cgroup puts on this process: its own group's or one above it, cgroup
// v2 (memory.max) or v1 (memory.limit_in_bytes), hybrid layouts included; nullopt when no group
// limits it. `procSelfCgroup` is /proc/self/cgroup's text, `cgroupRoot` where cgroups are mounted
// (parameters so that tests can lay out a tree of their own).
std::optional<std::uint64_t> cgroupMemoryLimit(const std::string& procSelfCgroup,
                                               const std::string& cgroupRoot = "/sys/fs/cgroup");

// The memory this process can use: physical memory, or less where a cgroup limits it (a
// container, a CI job, a systemd slice). Budgets derived from physical memory alone would let a
// stage grow until the kernel's OOM killer, not the engine, ends it, and the killer picks its
// victim, which may be kwb.
std::uint64_t usableMemoryBytes();

} // namespace kwb
