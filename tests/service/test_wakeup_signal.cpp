// A connection's thread waits on its socket and on the evaluation's end together: the end wakes
// it at once, and what the peer sends or a peer that leaves is still seen.
#include "engine/service/line_socket.h"
#include "engine/service/wakeup_signal.h"

#include <chrono>
#include <gtest/gtest.h>
#include <memory>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace kwb::test {
namespace {

using namespace std::chrono_literals;

TEST(WakeupSignal, AWaitOnTheSocketEndsWhenSignalledNotAtItsPatience) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    LineSocket connection(fds[0]);
    auto finished = std::make_shared<WakeupSignal>();
    ASSERT_GE(finished->fd(), 0);
    EXPECT_FALSE(finished->signalled());
    std::thread signaller([finished] {
        std::this_thread::sleep_for(50ms);
        finished->signal();
    });
    const auto started = std::chrono::steady_clock::now();
    EXPECT_FALSE(connection.peerGone(30s, finished->fd())) << "the peer is still there";
    EXPECT_LT(std::chrono::steady_clock::now() - started, 20s)
        << "woken by the signal, not by the half minute's patience";
    signaller.join();
    EXPECT_TRUE(finished->signalled());

    // A signalled wait still takes in what the peer sent, and still sees the peer leave.
    ASSERT_EQ(::write(fds[1], "{\"op\":\"status\"}\n", 16), 16);
    std::string line;
    ASSERT_EQ(connection.readLine(line, 10s, 1 << 20), LineSocket::Read::Line);
    EXPECT_EQ(line, "{\"op\":\"status\"}");
    ::close(fds[1]);
    EXPECT_TRUE(connection.peerGone(10s, finished->fd()));
}

TEST(WakeupSignal, WithoutASignalTheWaitLastsItsPatience) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    LineSocket connection(fds[0]);
    WakeupSignal never;
    const auto started = std::chrono::steady_clock::now();
    EXPECT_FALSE(connection.peerGone(100ms, never.fd()));
    EXPECT_GE(std::chrono::steady_clock::now() - started, 90ms);
    ::close(fds[1]);
}

} // namespace
} // namespace kwb::test
