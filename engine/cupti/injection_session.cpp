#include "engine/cupti/injection_session.h"

#include "engine/cupti/activity_lines.h"

#include <cstdio>
#include <cstdlib>
#include <cupti.h>
#include <new>
#include <unistd.h>

namespace kwb::cupti {
namespace {

// CUPTI fills buffers of this size; the flush thread empties them every kFlushInterval, so a
// buffer rarely fills before it is flushed, and a burst has room.
constexpr std::size_t kBufferBytes = 4u << 20;
constexpr std::size_t kBufferAlignment = 8;
constexpr std::chrono::milliseconds kFlushInterval{100};

std::string cuptiError(CUptiResult result) {
    const char* text = nullptr;
    if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || !text)
        return "CUPTI error " + std::to_string(static_cast<int>(result));
    return text;
}

void CUPTIAPI onBufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords) {
    InjectionSession::current().bufferRequested(buffer, size, maxRecords);
}

void CUPTIAPI onBufferCompleted(CUcontext context, uint32_t streamId, uint8_t* buffer, size_t size,
                                size_t validSize) {
    InjectionSession::current().bufferCompleted(context, streamId, buffer, size, validSize);
}

} // namespace

InjectionSession& InjectionSession::current() {
    // Never destroyed: CUPTI may deliver a last buffer while static destructors run.
    static auto* session = new InjectionSession();
    return *session;
}

void InjectionSession::report(const std::string& message) {
    std::fprintf(stderr, "[kwb-cupti] %s\n", message.c_str());
    if (sink_.isOpen())
        sink_.write(formatError(message), 1);
}

bool InjectionSession::enable(int kind, const char* label, bool required) {
    const CUptiResult result = cuptiActivityEnable(static_cast<CUpti_ActivityKind>(kind));
    if (result != CUPTI_SUCCESS)
        report(std::string(required ? "cannot" : "optional: cannot") + " record " + label + ": " +
               cuptiError(result));
    return result == CUPTI_SUCCESS;
}

void InjectionSession::start() {
    const char* path = std::getenv("KWB_TIMELINE_OUT");
    if (!path || !*path) {
        std::fprintf(stderr, "[kwb-cupti] KWB_TIMELINE_OUT is not set; not recording\n");
        return;
    }
    std::string error;
    if (!sink_.open(path, &error)) {
        std::fprintf(stderr, "[kwb-cupti] %s; not recording\n", error.c_str());
        return;
    }
    owner_ = ::getpid();
    std::uint32_t version = 0;
    cuptiGetVersion(&version);
    sink_.write(formatHeader(static_cast<std::uint64_t>(owner_), version), 1);

    const CUptiResult registered =
        cuptiActivityRegisterCallbacks(onBufferRequested, onBufferCompleted);
    if (registered != CUPTI_SUCCESS) {
        report("cannot register activity buffers: " + cuptiError(registered) + "; not recording");
        return;
    }
    // Kernels are what the timeline is for; without them there is nothing to record.
    if (!enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels", true)) {
        report("not recording");
        return;
    }
    enable(CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy", true);
    enable(CUPTI_ACTIVITY_KIND_MEMSET, "memset", true);
    enable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization", true);
    enable(CUPTI_ACTIVITY_KIND_MARKER, "NVTX markers", true);
    enable(CUPTI_ACTIVITY_KIND_DEVICE, "devices", false);
    enable(CUPTI_ACTIVITY_KIND_CONTEXT, "contexts", false);
    active_ = true;
    if (!flusher_.start(kFlushInterval, [this] { flush(false); }))
        report("no flush thread: records arrive when buffers fill and at exit");
}

void InjectionSession::flush(bool forced) {
    if (!active_ || ::getpid() != owner_)
        return;
    const CUptiResult result = cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
    if (result != CUPTI_SUCCESS && forced)
        report("flush failed: " + cuptiError(result));
}

void InjectionSession::finish() {
    if (!active_ || ::getpid() != owner_ || finished_.exchange(true))
        return;
    flusher_.stop();
    flush(true);
    sink_.write(formatEnd(sink_.recordsWritten(), sink_.writeFailures()), 1);
    active_ = false;
}

void InjectionSession::bufferRequested(std::uint8_t** buffer, std::size_t* size,
                                       std::size_t* maxRecords) {
    // Without memory CUPTI drops the records and counts them; the count reaches the engine.
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *maxRecords = 0;
}

void InjectionSession::bufferCompleted(void* context, std::uint32_t streamId, std::uint8_t* buffer,
                                       std::size_t /*size*/, std::size_t validSize) {
    std::string lines;
    std::uint64_t count = 0;
    std::uint64_t unknown = 0;
    try {
        lines.reserve(validSize / 2 + 256);
        CUpti_Activity* record = nullptr;
        while (validSize > 0 &&
               cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
            std::string line = formatActivity(record);
            if (line.empty()) {
                ++unknown;
                continue;
            }
            lines += line;
            ++count;
        }
    } catch (const std::bad_alloc&) {
        // Formatting ran out of memory: what was formatted still goes out; the rest is lost.
        ++unknown;
    }
    std::size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(static_cast<CUcontext>(context), streamId, &dropped);
    if (dropped > 0 || unknown > 0) {
        lines += formatDropped(dropped, unknown, 0);
        ++count;
    }
    if (count > 0)
        sink_.write(lines, count);
    std::free(buffer);
}

} // namespace kwb::cupti
