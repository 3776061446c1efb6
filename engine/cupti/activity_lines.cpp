#include "engine/cupti/activity_lines.h"

#include "engine/cupti/json_line.h"

#include <cupti_version.h>

namespace kwb::cupti {
namespace {

// CUPTI fills `streamId` and friends with this when a field does not apply; the format says -1.
std::int64_t orMinusOne(std::uint32_t value) {
    return value == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : static_cast<std::int64_t>(value);
}

// Where and when a stream activity ran: the leading fields of kernel, memcpy and memset lines.
template <typename Activity>
JsonLine& onStream(JsonLine& line, const Activity& a) {
    return line.field("dev", a.deviceId)
        .field("ctx", a.contextId)
        .field("stream", a.streamId)
        .field("start", a.start)
        .field("end", a.end);
}

std::string kernelLine(const CUpti_ActivityKernel10& k) {
    JsonLine line("kernel");
    onStream(line, k)
        .triple("grid", k.gridX, k.gridY, k.gridZ)
        .triple("block", k.blockX, k.blockY, k.blockZ)
        .field("regs", static_cast<std::uint32_t>(k.registersPerThread))
        .field("ssmem", k.staticSharedMemory)
        .field("dsmem", k.dynamicSharedMemory)
        .field("lmem", k.localMemoryPerThread)
        .field("corr", k.correlationId)
        .field("name", k.name);
    return line.finish();
}

std::string memcpyLine(const CUpti_ActivityMemcpy6& m) {
    JsonLine line("memcpy");
    onStream(line, m)
        .field("bytes", m.bytes)
        .field("kind", copyKindName(m.copyKind))
        .field("corr", m.correlationId);
    return line.finish();
}

std::string memsetLine(const CUpti_ActivityMemset4& m) {
    JsonLine line("memset");
    onStream(line, m).field("bytes", m.bytes).field("corr", m.correlationId);
    return line.finish();
}

std::string syncLine(const CUpti_ActivitySynchronization2& s) {
    JsonLine line("sync");
    line.field("ctx", s.contextId)
        .field("stream", orMinusOne(s.streamId))
        .field("start", s.start)
        .field("end", s.end)
        .field("type", synchronizationTypeName(static_cast<std::uint32_t>(s.type)))
        .field("corr", s.correlationId);
    return line.finish();
}

std::string markerLine(const CUpti_ActivityMarker2& m) {
    const char* flag = (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) ? "start"
                       : (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) ? "end"
                                                                    : "instant";
    JsonLine line("marker");
    line.field("id", m.id).field("flag", flag).field("ts", m.timestamp);
    if (m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
        m.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
        line.field("tid", m.objectId.pt.threadId);
    // End records of push/pop ranges carry no name; the reader pairs them by id.
    line.field("name", m.name).field("domain", m.domain);
    return line.finish();
}

} // namespace

const char* copyKindName(std::uint8_t copyKind) {
    switch (copyKind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
        return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
        return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
        return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
        return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
        return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return "PtoP";
    default:
        return "unknown";
    }
}

const char* synchronizationTypeName(std::uint32_t type) {
    switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
        return "event_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
        return "stream_wait_event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
        return "stream_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
        return "context_synchronize";
    default:
        return "unknown";
    }
}

std::string formatActivity(const CUpti_Activity* record) {
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return kernelLine(*reinterpret_cast<const CUpti_ActivityKernel10*>(record));
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return memcpyLine(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record));
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return memsetLine(*reinterpret_cast<const CUpti_ActivityMemset4*>(record));
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return syncLine(*reinterpret_cast<const CUpti_ActivitySynchronization2*>(record));
    case CUPTI_ACTIVITY_KIND_MARKER:
        return markerLine(*reinterpret_cast<const CUpti_ActivityMarker2*>(record));
    case CUPTI_ACTIVITY_KIND_DEVICE: {
        const auto& d = *reinterpret_cast<const CUpti_ActivityDevice5*>(record);
        JsonLine line("device");
        line.field("id", d.id)
            .field("name", d.name)
            .field("cc_major", d.computeCapabilityMajor)
            .field("cc_minor", d.computeCapabilityMinor);
        return line.finish();
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
        const auto& c = *reinterpret_cast<const CUpti_ActivityContext3*>(record);
        JsonLine line("context");
        line.field("ctx", c.contextId).field("dev", c.deviceId);
        return line.finish();
    }
    default:
        return {};
    }
}

std::string formatHeader(std::uint64_t pid, std::uint32_t cuptiApiVersion) {
    JsonLine line("header");
    line.text("format", kRecordFormat)
        .field("pid", pid)
        .field("cupti_api", cuptiApiVersion)
        .field("cupti_headers", static_cast<std::uint32_t>(CUPTI_API_VERSION));
    return line.finish();
}

std::string formatDropped(std::uint64_t cuptiDropped, std::uint64_t unknownKinds,
                          std::uint64_t writeFailures) {
    JsonLine line("dropped");
    if (cuptiDropped)
        line.field("cupti", cuptiDropped);
    if (unknownKinds)
        line.field("unknown", unknownKinds);
    if (writeFailures)
        line.field("write_failures", writeFailures);
    return line.finish();
}

std::string formatError(const std::string& message) {
    JsonLine line("error");
    line.text("msg", message);
    return line.finish();
}

std::string formatEnd(std::uint64_t records, std::uint64_t writeFailures) {
    JsonLine line("end");
    line.field("records", records).field("write_failures", writeFailures);
    return line.finish();
}

} // namespace kwb::cupti
