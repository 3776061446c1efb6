#pragma once

#include "engine/timeline/kernel_timeline.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <string_view>

namespace kwb::timeline {

// Reads the lines appended to a record file (or written into a FIFO) since the last call. The
// file may not exist yet; a partial last line waits for its newline. Non-blocking throughout,
// so a std::jthread can follow a run and stop at once when asked.
//
// A file replaced under its name (a writer that renames a fresh file over it) or truncated is
// read again from its start, and restarts() counts it: a reader that sums what it read starts
// its sums over too.
class RecordFileTail {
public:
    explicit RecordFileTail(std::string path);
    ~RecordFileTail();
    RecordFileTail(const RecordFileTail&) = delete;
    RecordFileTail& operator=(const RecordFileTail&) = delete;

    // Delivers every complete line that arrived since the last call; returns how many.
    std::size_t poll(const std::function<void(std::string_view)>& onLine);
    // Delivers a last line that never got its newline (the writer died mid-line).
    std::size_t drainPartial(const std::function<void(std::string_view)>& onLine);

    std::uint64_t bytesRead() const { return offset_; }
    // How many times reading began again at the start of a replaced or truncated file.
    std::uint64_t restarts() const { return restarts_; }
    // Reads the file again from its start at the next poll (the caller starts its sums over).
    void startOver();

private:
    bool ensureOpen();
    // A regular file that is no longer what the name holds, or shorter than what was read.
    bool replacedOrTruncated() const;
    void close();

    std::string path_;
    int fd_ = -1;
    bool fifo_ = false;
    std::uint64_t device_ = 0, inode_ = 0; // of the open file
    std::uint64_t restarts_ = 0;
    std::uint64_t offset_ = 0;
    std::string partial_;
};

// Follows a growing record file until `stop` is requested: every `interval` it reads what
// arrived and, when anything did, hands a fresh immutable snapshot to `onSnapshot`. After the
// stop it reads once more, so the last snapshot holds everything written before the stop.
// Returns that last snapshot.
TimelineSnapshot
followRecordFile(const std::string& path, std::stop_token stop,
                 const std::function<void(TimelineSnapshot)>& onSnapshot,
                 std::chrono::milliseconds interval = std::chrono::milliseconds(100));

} // namespace kwb::timeline
