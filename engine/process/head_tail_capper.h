#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kwb {

// Output kept within a byte budget: the first half of the budget holds how it started, the
// second half how it ended, which is where compilers, tracebacks and test summaries put the
// useful lines. The middle of a flood is dropped and counted. Every place that shows a child's
// output (the process runner, the agent's shell and background jobs, stage logs, tool results)
// caps it here, so the note a person or a model reads is always the same.
class HeadTailCapper {
public:
    explicit HeadTailCapper(std::size_t limit)
        : headLimit_(limit / 2), tailLimit_(limit - limit / 2) {}

    void append(std::string_view data);
    bool empty() const { return total_ == 0; }
    std::size_t totalBytes() const { return total_; }

    struct Capped {
        std::string text; // with omittedNote() where bytes were dropped
        std::size_t totalBytes = 0;
        std::size_t omittedBytes = 0;
        bool truncated() const { return omittedBytes > 0; }
    };
    // Everything appended since the last take, capped; the capper starts empty again.
    Capped take();

private:
    std::size_t headLimit_;
    std::size_t tailLimit_;
    std::size_t total_ = 0;
    std::string head_;
    std::string tail_;
};

// The note that stands for the dropped middle.
std::string omittedNote(std::size_t bytes);

// A whole text capped at once. The cuts fall on UTF-8 character boundaries, so a capped text
// is as valid as the text was (tool results go into JSON requests).
HeadTailCapper::Capped capHeadTail(std::string_view text, std::size_t limit);

// A file's head and tail, read without reading the middle (a stage log may be large). Empty
// text when the file cannot be read, is a link or is not a regular file.
HeadTailCapper::Capped capFileHeadTail(const std::string& path, std::size_t limit);

} // namespace kwb
