#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace kwb::cupti {

// Where the injection library's lines go: a regular file (appended) or a FIFO the engine reads.
// Thread-safe; a chunk of whole lines is written at once so concurrent writers never interleave
// inside a line. It never blocks the host process for long: a FIFO is opened non-blocking, and a
// reader that stops reading costs the lines (counted), not the run.
class RecordSink {
public:
    RecordSink() = default;
    ~RecordSink();
    RecordSink(const RecordSink&) = delete;
    RecordSink& operator=(const RecordSink&) = delete;

    // False with `error` set when the path cannot be opened for writing.
    bool open(const std::string& path, std::string* error);
    // Takes over a descriptor the process inherited (the judge's end of a pipe). Writes to it
    // block: the judge drains it on a thread of its own, and a record given up would read as
    // tampering there.
    void adopt(int fd);
    // From now on every line is sealed with `key` and numbered (sealed_line.h).
    void seal(std::string key);
    bool isOpen() const { return fd_ >= 0; }

    // Writes `lines` (whole lines, each ending in '\n'); `count` is how many, for the totals.
    // On failure the lines are lost and counted; the next successful write reports the loss
    // as a "dropped" record.
    void write(std::string_view lines, std::uint64_t count);

    std::uint64_t recordsWritten() const;
    std::uint64_t writeFailures() const;
    void close();

private:
    bool writeAll(std::string_view bytes);
    bool writeRaw(std::string_view bytes);

    mutable std::mutex mutex_;
    int fd_ = -1;
    bool fifo_ = false;
    std::uint64_t written_ = 0;
    std::uint64_t failures_ = 0;
    std::uint64_t failuresReported_ = 0;
    std::string sealKey_;
    std::uint64_t sequence_ = 0;
};

} // namespace kwb::cupti
