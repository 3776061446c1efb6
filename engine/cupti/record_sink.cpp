#include "engine/cupti/record_sink.h"

#include "engine/cupti/activity_lines.h"
#include "engine/cupti/sealed_line.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kwb::cupti {
namespace {

// How long a write may wait for a full FIFO to drain before its lines are given up.
constexpr int kFifoPatienceMs = 200;

} // namespace

RecordSink::~RecordSink() {
    close();
}

bool RecordSink::open(const std::string& path, std::string* error) {
    std::lock_guard lock(mutex_);
    struct stat info {};
    fifo_ = ::stat(path.c_str(), &info) == 0 && S_ISFIFO(info.st_mode);
    // A FIFO without a reader would block open() forever; non-blocking, it fails at once.
    const int flags = O_WRONLY | O_CLOEXEC | (fifo_ ? O_NONBLOCK : (O_CREAT | O_APPEND));
    fd_ = ::open(path.c_str(), flags, 0644);
    if (fd_ < 0 && error)
        *error = "cannot open " + path + ": " + std::strerror(errno);
    return fd_ >= 0;
}

void RecordSink::adopt(int fd) {
    std::lock_guard lock(mutex_);
    fd_ = fd;
    fifo_ = false;
    // The candidate's own children (a compiler, a subprocess) have no business with it.
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

void RecordSink::seal(std::string key) {
    std::lock_guard lock(mutex_);
    sealKey_ = std::move(key);
}

bool RecordSink::writeAll(std::string_view bytes) {
    if (!sealKey_.empty()) {
        std::string sealed;
        sealed.reserve(bytes.size() + bytes.size() / 2);
        while (!bytes.empty()) {
            const std::size_t end = bytes.find('\n');
            const std::string_view line = bytes.substr(0, end);
            sealed += sealLine(sealKey_, sequence_++, line);
            bytes.remove_prefix(end == std::string_view::npos ? bytes.size() : end + 1);
        }
        return writeRaw(sealed);
    }
    return writeRaw(bytes);
}

bool RecordSink::writeRaw(std::string_view bytes) {
    int waitedMs = 0;
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
        if (n > 0) {
            bytes.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN && fifo_ && waitedMs < kFifoPatienceMs) {
            pollfd p{fd_, POLLOUT, 0};
            ::poll(&p, 1, 10);
            waitedMs += 10;
            continue;
        }
        return false;
    }
    return true;
}

void RecordSink::write(std::string_view lines, std::uint64_t count) {
    std::lock_guard lock(mutex_);
    if (fd_ < 0) {
        failures_ += count;
        return;
    }
    if (!writeAll(lines)) {
        failures_ += count;
        return;
    }
    written_ += count;
    if (failures_ > failuresReported_) {
        const std::string note = formatDropped(0, 0, failures_ - failuresReported_);
        if (writeAll(note))
            failuresReported_ = failures_;
    }
}

std::uint64_t RecordSink::recordsWritten() const {
    std::lock_guard lock(mutex_);
    return written_;
}

std::uint64_t RecordSink::writeFailures() const {
    std::lock_guard lock(mutex_);
    return failures_;
}

void RecordSink::close() {
    std::lock_guard lock(mutex_);
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
}

} // namespace kwb::cupti
