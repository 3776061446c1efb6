#include "engine/process/head_tail_capper.h"

#include <algorithm>
#include <fstream>
#include <iterator>

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
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return {};
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::size_t>(std::max<std::streamoff>(0, in.tellg()));
    in.seekg(0);
    if (size <= limit) {
        std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::size_t total = all.size();
        return joined(std::move(all), {}, total);
    }
    std::string head(limit / 2, '\0'), tail(limit - limit / 2, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    in.seekg(static_cast<std::streamoff>(size - tail.size()));
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    return joined(std::move(head), tail, size);
}

} // namespace kwb
