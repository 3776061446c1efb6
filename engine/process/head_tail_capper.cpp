#include "engine/process/head_tail_capper.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kwb {
namespace {

bool isContinuationByte(char c) {
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

HeadTailCapper::Capped joined(std::string head, std::string_view tail, std::size_t total) {
    HeadTailCapper::Capped capped;
    capped.totalBytes = total;
    capped.omittedBytes = total - head.size() - tail.size();
    capped.text = std::move(head);
    if (capped.omittedBytes > 0)
        capped.text += omittedNote(capped.omittedBytes);
    capped.text += tail;
    return capped;
}

} // namespace

void HeadTailCapper::append(std::string_view data) {
    total_ += data.size();
    const std::size_t toHead =
        std::min(data.size(), headLimit_ - std::min(headLimit_, head_.size()));
    head_.append(data.substr(0, toHead));
    if (toHead == data.size())
        return;
    tail_.append(data.substr(toHead));
    // Trimmed lazily, so a flood of tiny writes stays linear.
    if (tail_.size() > 2 * tailLimit_ + 4096)
        tail_.erase(0, tail_.size() - tailLimit_);
}

HeadTailCapper::Capped HeadTailCapper::take() {
    if (tail_.size() > tailLimit_)
        tail_.erase(0, tail_.size() - tailLimit_);
    Capped capped = joined(std::move(head_), tail_, total_);
    head_.clear();
    tail_.clear();
    total_ = 0;
    return capped;
}

std::string omittedNote(std::size_t bytes) {
    return "\n[... " + std::to_string(bytes) + " bytes of output omitted ...]\n";
}

HeadTailCapper::Capped capHeadTail(std::string_view text, std::size_t limit) {
    if (text.size() <= limit)
        return joined(std::string(text), {}, text.size());
    std::size_t headEnd = limit / 2;
    while (headEnd > 0 && isContinuationByte(text[headEnd]))
        --headEnd;
    std::size_t tailStart = text.size() - (limit - limit / 2);
    while (tailStart < text.size() && isContinuationByte(text[tailStart]))
        ++tailStart;
    return joined(std::string(text.substr(0, headEnd)), text.substr(tailStart), text.size());
}

HeadTailCapper::Capped capFileHeadTail(const std::string& path, std::size_t limit) {
    // A log may lie in a folder a sandboxed process writes: a link there (to a key, say) must
    // not bring another file into the record, nor a FIFO or a device hang or flood the read.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return {};
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        ::close(fd);
        return {};
    }
    const auto size = static_cast<std::size_t>(info.st_size);
    const auto readAt = [fd](std::size_t offset, std::size_t length) {
        std::string bytes(length, '\0');
        std::size_t done = 0;
        while (done < length) {
            const ssize_t n =
                ::pread(fd, bytes.data() + done, length - done, static_cast<off_t>(offset + done));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            done += static_cast<std::size_t>(n);
        }
        bytes.resize(done);
        return bytes;
    };
    HeadTailCapper::Capped capped;
    if (size <= limit) {
        std::string all = readAt(0, size);
        const std::size_t total = all.size();
        capped = joined(std::move(all), {}, total);
    } else {
        std::string head = readAt(0, limit / 2);
        const std::string tail = readAt(size - (limit - limit / 2), limit - limit / 2);
        capped = joined(std::move(head), tail, size);
    }
    ::close(fd);
    return capped;
}

} // namespace kwb
