#include "engine/system/exclusive_file_lock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <utility>

namespace kwb {
namespace {
// The pid the current holder wrote, or empty.
std::string holderOf(int fd) {
    char buffer[32] = {};
    const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
    std::string text(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return text.find_first_not_of("0123456789") == std::string::npos ? text : std::string();
}
} // namespace

std::optional<ExclusiveFileLock>
ExclusiveFileLock::tryAcquire(const std::string& path, std::string* error, bool* heldByOther) {
    if (heldByOther)
        *heldByOther = false;
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        if (error)
            *error = "cannot open " + path + ": " + std::strerror(errno);
        return std::nullopt;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int why = errno;
        if (why != EWOULDBLOCK) {
            // No lock support here (ENOLCK, EINVAL on some file systems): not another holder.
            ::close(fd);
            if (error)
                *error = "cannot lock " + path + ": " + std::strerror(why);
            return std::nullopt;
        }
        const std::string holder = holderOf(fd);
        ::close(fd);
        if (heldByOther)
            *heldByOther = true;
        if (error)
            *error = holder.empty() ? "held by another process"
                                    : "held by another process (pid " + holder + ")";
        return std::nullopt;
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) == 0)
        (void)!::pwrite(fd, pid.data(), pid.size(), 0);
    return ExclusiveFileLock(fd);
}

ExclusiveFileLock::ExclusiveFileLock(ExclusiveFileLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

ExclusiveFileLock& ExclusiveFileLock::operator=(ExclusiveFileLock&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

ExclusiveFileLock::~ExclusiveFileLock() {
    if (fd_ >= 0)
        ::close(fd_); // closing the last descriptor releases the flock
}

} // namespace kwb
