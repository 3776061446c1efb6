#include "engine/service/line_socket.h"

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kwb {

LineSocket::~LineSocket() {
    if (fd_ >= 0)
        ::close(fd_);
}

bool LineSocket::send(const nlohmann::json& value) {
    // Invalid UTF-8 in a stage's log must not end the connection: replaced, not thrown.
    const std::string text =
        value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::lock_guard lock(sendMutex_);
    if (broken_)
        return false; // a line cut in the middle: nothing after it could be read
    std::size_t sent = 0;
    while (sent < text.size()) {
        const ssize_t n = ::send(fd_, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            broken_ = true;
            return false;
        }
        sent += static_cast<std::size_t>(n);
    }
    return true;
}

bool LineSocket::fill(std::chrono::milliseconds patience, bool& closed, int wakeFd) {
    pollfd p[2] = {{fd_, POLLIN, 0}, {wakeFd, POLLIN, 0}};
    const int ready = ::poll(p, wakeFd >= 0 ? 2 : 1, static_cast<int>(patience.count()));
    if (ready <= 0 || p[0].revents == 0)
        return false;
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return false;
    if (n <= 0) {
        closed = true;
        return false;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
}

LineSocket::Read LineSocket::readLine(std::string& line, std::chrono::milliseconds patience,
                                      std::size_t maxBytes) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    std::size_t scanned = 0;
    while (true) {
        const std::size_t end = buffer_.find('\n', scanned);
        if (end != std::string::npos) {
            line = buffer_.substr(0, end);
            buffer_.erase(0, end + 1);
            return Read::Line;
        }
        scanned = buffer_.size(); // only new bytes are searched next time
        if (buffer_.size() > maxBytes)
            return Read::TooLong;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return Read::Timeout;
        bool closed = false;
        fill(left, closed);
        if (closed)
            return Read::Closed;
    }
}

bool LineSocket::peerGone(std::chrono::milliseconds patience, int wakeFd) {
    bool closed = false;
    fill(patience, closed, wakeFd);
    // A peer that keeps talking while it should wait is treated as gone: its bytes are not kept
    // without bound.
    return closed || buffer_.size() > (1u << 20);
}

} // namespace kwb
