#include "engine/timeline/record_reader.h"

#include "engine/timeline/flat_json_object.h"

#include <limits>

namespace kwb::timeline {
namespace {

using Kind = FlatJsonValue::Kind;

// Field readers that refuse a wrong type instead of converting it: a record with a string where
// a timestamp belongs is malformed, not zero; so is a number too large for its field.
bool readInt(const FlatJsonObject& j, const char* key, std::int64_t& out, bool required = true) {
    const FlatJsonValue* value = j.find(key);
    if (!value)
        return !required;
    if (value->kind != Kind::Integer)
        return false;
    out = value->integer;
    return true;
}

template <typename Unsigned>
bool readUnsigned(const FlatJsonObject& j, const char* key, Unsigned& out, bool required = true) {
    const FlatJsonValue* value = j.find(key);
    if (!value)
        return !required;
    if (value->kind != Kind::Integer || value->integer < 0 ||
        static_cast<std::uint64_t>(value->integer) > std::numeric_limits<Unsigned>::max())
        return false;
    out = static_cast<Unsigned>(value->integer);
    return true;
}

bool readText(const FlatJsonObject& j, const char* key, std::string& out) {
    const FlatJsonValue* value = j.find(key);
    if (!value || value->kind == Kind::Null)
        return true;
    if (value->kind != Kind::String)
        return false;
    out = value->text;
    return true;
}

bool readTriple(const FlatJsonObject& j, const char* key, std::uint32_t (&out)[3]) {
    const FlatJsonValue* value = j.find(key);
    if (!value)
        return true;
    if (value->kind != Kind::IntegerArray || value->integers.size() != 3)
        return false;
    for (std::size_t i = 0; i < 3; ++i) {
        const std::int64_t element = value->integers[i];
        if (element < 0 || element > std::numeric_limits<std::uint32_t>::max())
            return false;
        out[i] = static_cast<std::uint32_t>(element);
    }
    return true;
}

bool readInterval(const FlatJsonObject& j, TimelineRecord& r) {
    return readInt(j, "start", r.start) && readInt(j, "end", r.end) && r.end >= r.start;
}

bool readPlacement(const FlatJsonObject& j, TimelineRecord& r) {
    return readUnsigned(j, "dev", r.device) && readUnsigned(j, "ctx", r.context, false) &&
           readInt(j, "stream", r.stream) && r.stream >= 0;
}

bool readKernel(const FlatJsonObject& j, TimelineRecord& r) {
    KernelLaunch& k = r.launch;
    return readPlacement(j, r) && readInterval(j, r) && readTriple(j, "grid", k.grid) &&
           readTriple(j, "block", k.block) &&
           readUnsigned(j, "regs", k.registersPerThread, false) &&
           readUnsigned(j, "ssmem", k.staticSharedBytes, false) &&
           readUnsigned(j, "dsmem", k.dynamicSharedBytes, false) &&
           readUnsigned(j, "lmem", k.localBytesPerThread, false) &&
           readUnsigned(j, "corr", k.correlationId, false) && readText(j, "name", r.name) &&
           !r.name.empty();
}

bool readTransfer(const FlatJsonObject& j, TimelineRecord& r) {
    return readPlacement(j, r) && readInterval(j, r) && readUnsigned(j, "bytes", r.bytes) &&
           readText(j, "kind", r.detail) && readUnsigned(j, "corr", r.launch.correlationId, false);
}

bool readSync(const FlatJsonObject& j, TimelineRecord& r) {
    return readUnsigned(j, "ctx", r.context) && readInt(j, "stream", r.stream, false) &&
           readInterval(j, r) && readText(j, "type", r.detail) &&
           readUnsigned(j, "corr", r.launch.correlationId, false);
}

bool readMarker(const FlatJsonObject& j, TimelineRecord& r) {
    std::string flag;
    if (!readUnsigned(j, "id", r.id) || !readInt(j, "ts", r.start) || !readText(j, "flag", flag) ||
        !readUnsigned(j, "tid", r.thread, false) || !readText(j, "name", r.name) ||
        !readText(j, "domain", r.detail))
        return false;
    r.end = r.start;
    if (flag == "start")
        r.flag = MarkerFlag::Start;
    else if (flag == "end")
        r.flag = MarkerFlag::End;
    else if (flag == "instant")
        r.flag = MarkerFlag::Instant;
    else
        return false;
    return true;
}

bool readBody(const std::string& type, const FlatJsonObject& j, TimelineRecord& r) {
    if (type == "kernel") {
        r.type = RecordType::Kernel;
        return readKernel(j, r);
    }
    if (type == "memcpy" || type == "memset") {
        r.type = type == "memcpy" ? RecordType::Memcpy : RecordType::Memset;
        return readTransfer(j, r);
    }
    if (type == "sync") {
        r.type = RecordType::Sync;
        return readSync(j, r);
    }
    if (type == "marker") {
        r.type = RecordType::Marker;
        return readMarker(j, r);
    }
    if (type == "device") {
        r.type = RecordType::Device;
        return readUnsigned(j, "id", r.device) && readText(j, "name", r.name);
    }
    if (type == "context") {
        r.type = RecordType::Context;
        return readUnsigned(j, "ctx", r.context) && readUnsigned(j, "dev", r.device);
    }
    if (type == "dropped") {
        r.type = RecordType::Dropped;
        return readUnsigned(j, "cupti", r.droppedCupti, false) &&
               readUnsigned(j, "unknown", r.droppedUnknown, false) &&
               readUnsigned(j, "write_failures", r.writeFailures, false);
    }
    if (type == "header") {
        r.type = RecordType::Header;
        return readText(j, "format", r.name) && r.name.rfind("kwb-cupti/", 0) == 0 &&
               readUnsigned(j, "pid", r.id, false);
    }
    if (type == "error") {
        r.type = RecordType::Error;
        return readText(j, "msg", r.name);
    }
    if (type == "end") {
        r.type = RecordType::End;
        return readUnsigned(j, "write_failures", r.writeFailures, false);
    }
    r.type = RecordType::Unknown;
    return true;
}

} // namespace

std::optional<TimelineRecord> parseRecordLine(std::string_view line) {
    return parseRecordLine(line, FlatJsonParser::Fastest);
}

std::optional<TimelineRecord> parseRecordLine(std::string_view line, FlatJsonParser parser) {
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
        line.remove_suffix(1);
    if (line.empty())
        return std::nullopt;
    // One object per thread, reused: its field storage outlives the line.
    thread_local FlatJsonObject object;
    if (!object.parse(line, parser))
        return std::nullopt;
    const FlatJsonValue* type = object.find("t");
    if (!type || type->kind != Kind::String)
        return std::nullopt;
    TimelineRecord record;
    if (!readBody(type->text, object, record))
        return std::nullopt;
    return record;
}

} // namespace kwb::timeline
