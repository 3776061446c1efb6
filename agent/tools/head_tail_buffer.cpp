#include "agent/tools/head_tail_buffer.h"

#include <algorithm>

namespace kwb::agent {

void HeadTailBuffer::append(std::string_view data) {
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

HeadTailBuffer::Taken HeadTailBuffer::take() {
    if (tail_.size() > tailLimit_)
        tail_.erase(0, tail_.size() - tailLimit_);
    Taken taken;
    taken.totalBytes = total_;
    taken.omittedBytes = total_ - head_.size() - tail_.size();
    taken.text = std::move(head_);
    if (taken.omittedBytes > 0)
        taken.text +=
            "\n[... " + std::to_string(taken.omittedBytes) + " bytes of output omitted ...]\n";
    taken.text += tail_;
    head_.clear();
    tail_.clear();
    total_ = 0;
    return taken;
}

} // namespace kwb::agent
