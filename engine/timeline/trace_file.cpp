#include "engine/timeline/trace_file.h"

#include "engine/timeline/chrome_trace_reader.h"
#include "engine/timeline/flat_json_object.h"
#include "engine/timeline/timeline_builder.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <istream>
#include <memory>
#include <streambuf>

namespace kwb::timeline {
namespace {

namespace fs = std::filesystem;

// Lines are handed to the builder a block at a time; progress and the stop are looked at in
// between. 8 MiB is ~35,000 kernel lines: a few milliseconds of parsing.
constexpr std::size_t kBlockBytes = 8u << 20;
// What detection reads of the file's start.
constexpr std::size_t kHeadBytes = 64u << 10;

struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::string_view trimmedStart(std::string_view text) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") // a UTF-8 byte-order mark
        text.remove_prefix(3);
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    return first == std::string_view::npos ? std::string_view() : text.substr(first);
}

bool looksBinary(std::string_view text) {
    const std::size_t n = std::min<std::size_t>(text.size(), 512);
    return std::any_of(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(n), [](char c) {
        const auto b = static_cast<unsigned char>(c);
        return b < 0x09 || (b > 0x0d && b < 0x20);
    });
}

// Hands the file to nlohmann's SAX parser in blocks, reporting progress after each; a stop
// ends the stream early, which the parser sees as a truncated document.
class ProgressStreamBuffer final : public std::streambuf {
public:
    ProgressStreamBuffer(std::FILE* file, std::uint64_t total, std::stop_token stop,
                         const TraceProgress& progress)
        : file_(file), total_(total), stop_(std::move(stop)), progress_(progress),
          buffer_(1u << 20) {}

    bool stopped() const { return stopped_; }
    bool readFailed() const { return readFailed_; }

protected:
    int_type underflow() override {
        if (gptr() < egptr())
            return traits_type::to_int_type(*gptr());
        if (stop_.stop_requested()) {
            stopped_ = true;
            return traits_type::eof();
        }
        const std::size_t n = std::fread(buffer_.data(), 1, buffer_.size(), file_);
        if (n == 0) {
            readFailed_ = std::ferror(file_) != 0;
            return traits_type::eof();
        }
        done_ += n;
        if (progress_)
            progress_(done_, total_);
        setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
        return traits_type::to_int_type(*gptr());
    }

private:
    std::FILE* file_;
    std::uint64_t total_;
    std::uint64_t done_ = 0;
    std::stop_token stop_;
    const TraceProgress& progress_;
    std::vector<char> buffer_;
    bool stopped_ = false;
    bool readFailed_ = false;
};

void readRecordLines(std::FILE* file, LoadedTrace& out, TimelineBuilder& builder,
                     std::stop_token stop, const TraceProgress& progress) {
    std::string block;
    std::string carry; // the start of a line the previous block cut
    std::uint64_t done = 0;
    for (;;) {
        if (stop.stop_requested()) {
            out.cancelled = true;
            return;
        }
        block.resize(kBlockBytes);
        const std::size_t n = std::fread(block.data(), 1, block.size(), file);
        block.resize(n);
        if (n == 0) {
            if (std::ferror(file)) {
                out.error = std::string("read failed: ") + std::strerror(errno);
                return;
            }
            break;
        }
        done += n;
        std::string_view rest(block);
        if (!carry.empty()) {
            const std::size_t newline = rest.find('\n');
            if (newline == std::string_view::npos) {
                carry.append(rest);
                continue;
            }
            carry.append(rest.substr(0, newline));
            builder.addLine(carry);
            carry.clear();
            rest.remove_prefix(newline + 1);
        }
        for (std::size_t newline; (newline = rest.find('\n')) != std::string_view::npos;) {
            builder.addLine(rest.substr(0, newline));
            rest.remove_prefix(newline + 1);
        }
        carry.assign(rest);
        if (progress)
            progress(done, out.bytes);
    }
    if (!carry.empty())
        builder.addLine(carry); // a last line without its newline
}

// A Chrome trace read whole, then parsed by simdjson: the read is the first fifth of the
// progress, the parse the rest.
void readChromeInMemory(std::FILE* file, const std::string& path, LoadedTrace& out,
                        TimelineBuilder& builder, std::stop_token stop,
                        const TraceProgress& progress) {
    std::string text;
    text.reserve(static_cast<std::size_t>(out.bytes) + 64);
    std::vector<char> block(kBlockBytes);
    const std::uint64_t total = std::max<std::uint64_t>(out.bytes, 1);
    for (;;) {
        if (stop.stop_requested()) {
            out.cancelled = true;
            return;
        }
        const std::size_t n = std::fread(block.data(), 1, block.size(), file);
        if (n == 0) {
            if (std::ferror(file)) {
                out.error = "read failed: " + path;
                return;
            }
            break;
        }
        text.append(block.data(), n);
        if (progress)
            progress(std::min<std::uint64_t>(text.size(), total) / 5, total);
    }
    const ChromeTraceRead read =
        readChromeTraceBuffer(text, builder, stop, [&](std::uint64_t done, std::uint64_t all) {
            if (progress && all > 0)
                progress(total / 5 + (total - total / 5) * done / all, total);
        });
    out.records = read.events;
    out.skipped = read.skipped;
    if (read.cancelled)
        out.cancelled = true;
    else if (!read.ok)
        out.error = path + " is not a readable Chrome trace: " + read.error;
    else if (progress)
        progress(total, total);
}

} // namespace

std::string toString(TraceFormat format) {
    switch (format) {
    case TraceFormat::CuptiRecords:
        return "kwb-cupti records";
    case TraceFormat::ChromeJson:
        return "Chrome trace-event JSON";
    case TraceFormat::Unknown:
        break;
    }
    return "unknown";
}

TraceFormat detectTraceFormat(std::string_view head, std::string* why) {
    auto unknown = [why](const char* reason) {
        if (why)
            *why = reason;
        return TraceFormat::Unknown;
    };
    if (head.substr(0, 2) == "\x1f\x8b")
        return unknown("it is gzip-compressed: decompress it first (gunzip)");
    const std::string_view text = trimmedStart(head);
    if (text.empty())
        return unknown("the file is empty");
    if (text.front() == '[')
        return TraceFormat::ChromeJson;
    if (text.front() == '{') {
        // Record files are one flat object per line with a type field "t"; a Chrome trace is
        // one document, often written over many lines.
        const std::string_view firstLine = text.substr(0, text.find('\n'));
        FlatJsonObject object;
        if (object.parse(firstLine)) {
            const FlatJsonValue* type = object.find("t");
            if (type && type->kind == FlatJsonValue::Kind::String)
                return TraceFormat::CuptiRecords;
        }
        return TraceFormat::ChromeJson;
    }
    if (looksBinary(text))
        return unknown("it is a binary file, not a JSON trace (Perfetto's protobuf traces are "
                       "not read: export them as JSON)");
    return unknown("it is neither kwb-cupti record lines nor Chrome trace-event JSON");
}

LoadedTrace loadTraceFile(const std::string& path, std::stop_token stop,
                          const TraceProgress& progress, FlatJsonParser chromeParser) {
    LoadedTrace out;
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
        out.error = path + " does not exist";
        return out;
    }
    if (!fs::is_regular_file(status)) {
        out.error = path + " is not a file";
        return out;
    }
    out.bytes = fs::file_size(path, ec);
    File file(std::fopen(path.c_str(), "rb"));
    if (!file) {
        out.error = "cannot open " + path + ": " + std::strerror(errno);
        return out;
    }
    std::string head(kHeadBytes, '\0');
    head.resize(std::fread(head.data(), 1, head.size(), file.get()));
    std::string why;
    out.format = detectTraceFormat(head, &why);
    if (out.format == TraceFormat::Unknown) {
        out.error = "cannot open " + path + ": " + why;
        return out;
    }
    std::rewind(file.get());

    TimelineBuilder builder;
    if (out.format == TraceFormat::CuptiRecords) {
        readRecordLines(file.get(), out, builder, stop, progress);
        out.records = builder.recordsAdded();
        out.sawHeader = builder.sawHeader();
        out.sawEnd = builder.sawEnd();
        out.writerErrors = builder.errors();
    } else if (chromeParser == FlatJsonParser::Fastest && chromeTraceBufferSupported()) {
        readChromeInMemory(file.get(), path, out, builder, stop, progress);
    } else {
        ProgressStreamBuffer buffer(file.get(), out.bytes, stop, progress);
        std::istream in(&buffer);
        const ChromeTraceRead read = readChromeTrace(in, builder);
        out.records = read.events;
        out.skipped = read.skipped;
        if (buffer.stopped())
            out.cancelled = true;
        else if (buffer.readFailed())
            out.error = "read failed: " + path;
        else if (!read.ok)
            out.error = path + " is not a readable Chrome trace: " + read.error;
    }
    if (out.cancelled || !out.error.empty())
        return out;
    out.timeline = builder.finish();
    out.malformed = out.timeline->dropped.malformed;
    return out;
}

} // namespace kwb::timeline
