#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kwb::agent {

// Output of a long-running process kept within a byte budget: the first half of the budget
// holds how it started, the second half how it ended; the middle of a flood is dropped and
// counted.
class HeadTailBuffer {
public:
    explicit HeadTailBuffer(std::size_t limit)
        : headLimit_(limit / 2), tailLimit_(limit - limit / 2) {}

    void append(std::string_view data);

    struct Taken {
        std::string text; // with a note where bytes were dropped
        std::size_t totalBytes = 0;
        std::size_t omittedBytes = 0;
    };
    // Everything appended since the last take, and an empty buffer.
    Taken take();
    bool empty() const { return total_ == 0; }

private:
    std::size_t headLimit_;
    std::size_t tailLimit_;
    std::size_t total_ = 0;
    std::string head_;
    std::string tail_;
};

} // namespace kwb::agent
