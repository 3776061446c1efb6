#include "engine/timeline/record_file_tail.h"

#include "engine/timeline/timeline_builder.h"

#include <cerrno>
#include <condition_variable>
#include <fcntl.h>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

namespace kwb::timeline {

RecordFileTail::RecordFileTail(std::string path) : path_(std::move(path)) {}

RecordFileTail::~RecordFileTail() {
    close();
}

void RecordFileTail::close() {
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
    offset_ = 0;
    partial_.clear();
}

void RecordFileTail::startOver() {
    close();
}

bool RecordFileTail::ensureOpen() {
    if (fd_ >= 0)
        return true;
    struct stat info {};
    if (::lstat(path_.c_str(), &info) != 0)
        return false; // not created yet
    fifo_ = S_ISFIFO(info.st_mode);
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer. Never through
    // a link: the profile stage writes the record's folder, and a link planted there would
    // bring another file into the timeline.
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    struct stat opened {};
    if (fd_ >= 0 && ::fstat(fd_, &opened) == 0) {
        device_ = opened.st_dev;
        inode_ = opened.st_ino;
    }
    return fd_ >= 0;
}

bool RecordFileTail::replacedOrTruncated() const {
    struct stat opened {};
    if (::fstat(fd_, &opened) != 0)
        return false;
    if (static_cast<std::uint64_t>(opened.st_size) < offset_)
        return true;
    // A name that now holds another file (renamed over ours); a name removed keeps ours.
    struct stat named {};
    return ::lstat(path_.c_str(), &named) == 0 &&
           (static_cast<std::uint64_t>(named.st_dev) != device_ ||
            static_cast<std::uint64_t>(named.st_ino) != inode_);
}

std::size_t RecordFileTail::poll(const std::function<void(std::string_view)>& onLine) {
    if (fd_ >= 0 && !fifo_ && replacedOrTruncated()) {
        close();
        ++restarts_;
    }
    if (!ensureOpen())
        return 0;
    char chunk[64 * 1024];
    std::size_t delivered = 0;
    for (;;) {
        const ssize_t n = ::read(fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; // end of what is there (0), nothing yet in a FIFO (EAGAIN), or an error
        offset_ += static_cast<std::uint64_t>(n);
        partial_.append(chunk, static_cast<std::size_t>(n));
        std::size_t begin = 0;
        for (std::size_t nl = partial_.find('\n'); nl != std::string::npos;
             nl = partial_.find('\n', begin)) {
            onLine(std::string_view(partial_).substr(begin, nl - begin));
            ++delivered;
            begin = nl + 1;
        }
        partial_.erase(0, begin);
    }
    return delivered;
}

std::size_t RecordFileTail::drainPartial(const std::function<void(std::string_view)>& onLine) {
    if (partial_.empty())
        return 0;
    onLine(partial_);
    partial_.clear();
    return 1;
}

TimelineSnapshot followRecordFile(const std::string& path, std::stop_token stop,
                                  const std::function<void(TimelineSnapshot)>& onSnapshot,
                                  std::chrono::milliseconds interval) {
    RecordFileTail tail(path);
    TimelineBuilder builder;
    auto feed = [&](std::string_view line) { builder.addLine(line); };
    std::mutex mutex;
    std::condition_variable_any wake;
    while (!stop.stop_requested()) {
        if (tail.poll(feed) > 0 && onSnapshot)
            onSnapshot(builder.finish());
        std::unique_lock lock(mutex);
        wake.wait_for(lock, stop, interval, [] { return false; });
    }
    const std::size_t last = tail.poll(feed) + tail.drainPartial(feed);
    TimelineSnapshot snapshot = builder.finish();
    if (last > 0 && onSnapshot)
        onSnapshot(snapshot);
    return snapshot;
}

} // namespace kwb::timeline
