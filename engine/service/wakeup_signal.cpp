#include "engine/service/wakeup_signal.h"

#include <cstdint>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace kwb {

WakeupSignal::WakeupSignal() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

WakeupSignal::~WakeupSignal() {
    if (fd_ >= 0)
        ::close(fd_);
}

void WakeupSignal::signal() {
    if (fd_ < 0)
        return;
    const std::uint64_t one = 1;
    // Non-blocking: a counter that is already at its limit is readable anyway.
    [[maybe_unused]] const ssize_t written = ::write(fd_, &one, sizeof one);
}

bool WakeupSignal::signalled() const {
    if (fd_ < 0)
        return false;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

} // namespace kwb
