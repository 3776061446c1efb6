#pragma once

#include <optional>
#include <string>

namespace kwb {

// An advisory lock on a file (flock), held while the object lives: one process at a time serves
// an endpoint or executes a rollout run. The kernel drops it when the process dies, however it
// dies, so a crash never leaves a stale lock behind. The holder's pid is written into the file
// for the message another process gets.
class ExclusiveFileLock {
public:
    // The lock, or nullopt with `error` saying why: held by another process (with its pid when
    // known) or the file cannot be opened. `heldByOther` tells the two apart.
    static std::optional<ExclusiveFileLock> tryAcquire(const std::string& path, std::string* error,
                                                       bool* heldByOther = nullptr);

    ExclusiveFileLock(ExclusiveFileLock&& other) noexcept;
    ExclusiveFileLock& operator=(ExclusiveFileLock&& other) noexcept;
    ExclusiveFileLock(const ExclusiveFileLock&) = delete;
    ExclusiveFileLock& operator=(const ExclusiveFileLock&) = delete;
    ~ExclusiveFileLock();

private:
    explicit ExclusiveFileLock(int fd) : fd_(fd) {}
    int fd_ = -1;
};

} // namespace kwb
