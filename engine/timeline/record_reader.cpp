#include "engine/timeline/record_reader.h"

#include "engine/system/bounded_json.h"

#include <nlohmann/json.hpp>

namespace kwb::timeline {
namespace {

using nlohmann::json;

// Field readers that refuse a wrong type instead of converting it: a record with a string where
// a timestamp belongs is malformed, not zero.
bool readInt(const json& j, const char* key, std::int64_t& out, bool required = true) {
    auto it = j.find(key);
    if (it == j.end())
        return !required;
    if (!it->is_number_integer())
        return false;
    out = it->get<std::int64_t>();
    return true;
}

template <typename Unsigned>
bool readUnsigned(const json& j, const char* key, Unsigned& out, bool required = true) {
    std::int64_t value = 0;
    if (!readInt(j, key, value, required))
        return false;
    if (value < 0)
        return false;
    if (j.contains(key))
        out = static_cast<Unsigned>(value);
    return true;
}

bool readText(const json& j, const char* key, std::string& out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return true;
    if (!it->is_string())
        return false;
    out = it->get<std::string>();
    return true;
}

bool readTriple(const json& j, const char* key, std::uint32_t (&out)[3]) {
    auto it = j.find(key);
    if (it == j.end())
        return true;
    if (!it->is_array() || it->size() != 3)
        return false;
    for (std::size_t i = 0; i < 3; ++i) {
        if (!(*it)[i].is_number_integer() || (*it)[i].get<std::int64_t>() < 0)
            return false;
        out[i] = (*it)[i].get<std::uint32_t>();
    }
    return true;
}

bool readInterval(const json& j, TimelineRecord& r) {
    return readInt(j, "start", r.start) && readInt(j, "end", r.end) && r.end >= r.start;
}

bool readPlacement(const json& j, TimelineRecord& r) {
    return readUnsigned(j, "dev", r.device) && readUnsigned(j, "ctx", r.context, false) &&
           readInt(j, "stream", r.stream) && r.stream >= 0;
}

bool readKernel(const json& j, TimelineRecord& r) {
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

bool readTransfer(const json& j, TimelineRecord& r) {
    return readPlacement(j, r) && readInterval(j, r) && readUnsigned(j, "bytes", r.bytes) &&
           readText(j, "kind", r.detail) && readUnsigned(j, "corr", r.launch.correlationId, false);
}

bool readSync(const json& j, TimelineRecord& r) {
    return readUnsigned(j, "ctx", r.context) && readInt(j, "stream", r.stream, false) &&
           readInterval(j, r) && readText(j, "type", r.detail) &&
           readUnsigned(j, "corr", r.launch.correlationId, false);
}

bool readMarker(const json& j, TimelineRecord& r) {
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

bool readBody(const std::string& type, const json& j, TimelineRecord& r) {
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
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
        line.remove_suffix(1);
    if (line.empty())
        return std::nullopt;
    const json j = parseBoundedJson(line);
    if (!j.is_object())
        return std::nullopt;
    auto type = j.find("t");
    if (type == j.end() || !type->is_string())
        return std::nullopt;
    TimelineRecord record;
    try {
        if (!readBody(type->get<std::string>(), j, record))
            return std::nullopt;
    } catch (const json::exception&) {
        return std::nullopt; // a number out of range for its field
    }
    return record;
}

} // namespace kwb::timeline
