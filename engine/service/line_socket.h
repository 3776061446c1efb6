#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace kwb {

// One connection of `kwb serve`'s protocol: JSON values, one per line, over a Unix stream
// socket. Owns the descriptor. Sending is safe from several threads (progress lines come from
// the service's workers while the connection's own thread sends the result).
class LineSocket {
public:
    explicit LineSocket(int fd) : fd_(fd) {}
    ~LineSocket();
    LineSocket(const LineSocket&) = delete;
    LineSocket& operator=(const LineSocket&) = delete;

    int fd() const { return fd_; }
    // False when the peer is gone or did not take the line within the socket's send timeout
    // (never raises SIGPIPE); the socket is broken from then on.
    bool send(const nlohmann::json& value);
    bool broken() const { return broken_; }
    enum class Read { Line, Timeout, Closed, TooLong };
    // The next line (without its newline) within `patience`; lines longer than `maxBytes` end
    // the connection's reading (TooLong).
    Read readLine(std::string& line, std::chrono::milliseconds patience, std::size_t maxBytes);
    // Whether the peer closed its end or the connection broke, waiting at most `patience`, or
    // less when `wakeFd` (>= 0) becomes readable first. Bytes that arrive meanwhile are kept for
    // readLine.
    bool peerGone(std::chrono::milliseconds patience, int wakeFd = -1);

private:
    bool fill(std::chrono::milliseconds patience, bool& closed, int wakeFd = -1);

    int fd_;
    std::mutex sendMutex_;
    std::string buffer_;
    std::atomic<bool> broken_{false};
};

} // namespace kwb
