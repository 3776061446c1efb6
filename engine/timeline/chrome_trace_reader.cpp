#include "engine/timeline/chrome_trace_reader.h"

#include "engine/timeline/perfetto_export.h"
#include "engine/timeline/timeline_builder.h"

#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

namespace kwb::timeline {
namespace {

using nlohmann::json;

// Deeper than any trace writer nests; a document nested further is refused rather than walked.
constexpr std::size_t kMaxDepth = 256;

// The fields of one trace event that a timeline uses; the rest is skipped as it streams by.
struct ChromeEvent {
    std::string name, category, phase;
    std::optional<double> ts, dur;
    std::int64_t pid = 0, tid = 0;
    // args
    std::vector<std::int64_t> grid, block;
    std::optional<std::int64_t> registers, staticShared, dynamicShared, localBytes, correlation,
        bytes, syncType, device, stream;
    std::string mangledName, copyKind;
};

std::string synchronizationType(std::int64_t code) {
    switch (code) { // CUpti_ActivitySynchronizationType, as TimelineEvent::detail keeps it
    case 1:
        return "event_synchronize";
    case 2:
        return "stream_wait_event";
    case 3:
        return "stream_synchronize";
    case 4:
        return "context_synchronize";
    default:
        return "unknown";
    }
}

std::uint32_t clampedUnsigned(std::optional<std::int64_t> value, std::uint32_t fallback = 0) {
    if (!value || *value < 0)
        return fallback;
    return static_cast<std::uint32_t>(
        std::min<std::int64_t>(*value, std::numeric_limits<std::uint32_t>::max()));
}

class ChromeTraceHandler final : public nlohmann::json_sax<json> {
public:
    explicit ChromeTraceHandler(TimelineBuilder& builder) : builder_(builder) {}

    bool null() override { return scalar(std::nullopt, std::nullopt, nullptr); }
    bool boolean(bool) override { return scalar(std::nullopt, std::nullopt, nullptr); }
    bool number_integer(number_integer_t v) override {
        return scalar(v, static_cast<double>(v), nullptr);
    }
    bool number_unsigned(number_unsigned_t v) override {
        const auto max = static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max());
        return scalar(v <= max ? std::optional<std::int64_t>(static_cast<std::int64_t>(v))
                               : std::nullopt,
                      static_cast<double>(v), nullptr);
    }
    bool number_float(number_float_t v, const string_t&) override {
        std::optional<std::int64_t> integral;
        if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e18)
            integral = static_cast<std::int64_t>(v);
        return scalar(integral, v, nullptr);
    }
    bool string(string_t& v) override { return scalar(std::nullopt, std::nullopt, &v); }
    bool binary(binary_t&) override { return true; }

    bool key(string_t& k) override {
        key_.swap(k);
        return true;
    }

    bool start_object(std::size_t) override {
        Where where = Where::Skip;
        if (stack_.empty())
            where = Where::Top;
        else if (top() == Where::Events)
            where = Where::Event;
        else if (top() == Where::Event && key_ == "args")
            where = Where::Args;
        else if (top() == Where::Top && key_ == "otherData")
            where = Where::OtherData;
        if (where == Where::Event)
            event_ = ChromeEvent();
        return push(where);
    }
    bool end_object() override {
        const Where where = top();
        stack_.pop_back();
        if (where == Where::Event)
            emit();
        return true;
    }
    bool start_array(std::size_t) override {
        Where where = Where::Skip;
        if (stack_.empty() || (top() == Where::Top && key_ == "traceEvents")) {
            where = Where::Events;
            sawEvents_ = true;
        } else if (top() == Where::Args && (key_ == "grid" || key_ == "block")) {
            where = Where::ArgsArray;
            arrayKey_ = key_;
            array_.clear();
        }
        return push(where);
    }
    bool end_array() override {
        const Where where = top();
        stack_.pop_back();
        if (where == Where::ArgsArray)
            (arrayKey_ == "grid" ? event_.grid : event_.block) = array_;
        return true;
    }
    bool parse_error(std::size_t position, const std::string&,
                     const nlohmann::detail::exception& e) override {
        error_ = "not valid JSON at byte " + std::to_string(position) + ": " + e.what();
        return false;
    }

    const std::string& error() const { return error_; }
    bool sawEvents() const { return sawEvents_; }
    std::uint64_t events() const { return events_; }
    std::uint64_t skipped() const { return skipped_; }
    bool kwbExport() const { return kwbExport_; }

private:
    enum class Where { Top, Events, Event, Args, ArgsArray, OtherData, Skip };

    Where top() const { return stack_.back(); }
    bool push(Where where) {
        if (stack_.size() >= kMaxDepth) {
            error_ = "nested more than " + std::to_string(kMaxDepth) + " levels deep";
            return false;
        }
        stack_.push_back(where);
        return true;
    }

    // A scalar value: an integer when it is one (also 3.0), its number, or its text.
    bool scalar(std::optional<std::int64_t> integer, std::optional<double> number,
                std::string* text) {
        if (stack_.empty())
            return true; // a bare scalar document: no events, reported by the caller
        switch (top()) {
        case Where::Event:
            eventField(integer, number, text);
            break;
        case Where::Args:
            argument(integer, text);
            break;
        case Where::ArgsArray:
            if (integer)
                array_.push_back(*integer);
            break;
        case Where::OtherData:
            if (key_ == "format" && text)
                kwbExport_ = *text == "kwb-timeline/1";
            else if (key_ == "origin_ns" && integer)
                originNs_ = *integer;
            else if (key_ == "device_name" && text)
                deviceName_ = *text;
            break;
        default:
            break;
        }
        return true;
    }

    void eventField(std::optional<std::int64_t> integer, std::optional<double> number,
                    std::string* text) {
        if (key_ == "name" && text)
            event_.name.swap(*text);
        else if (key_ == "cat" && text)
            event_.category.swap(*text);
        else if (key_ == "ph" && text)
            event_.phase.swap(*text);
        else if (key_ == "ts" && number)
            event_.ts = *number;
        else if (key_ == "dur" && number)
            event_.dur = *number;
        else if (key_ == "pid")
            event_.pid = integer ? *integer : text ? lane(*text) : 0;
        else if (key_ == "tid")
            event_.tid = integer ? *integer : text ? lane(*text) : 0;
    }

    void argument(std::optional<std::int64_t> integer, std::string* text) {
        if (text) {
            if (key_ == "mangled_name")
                event_.mangledName.swap(*text);
            else if (key_ == "copy_kind")
                event_.copyKind.swap(*text);
            return;
        }
        if (!integer)
            return;
        // kwb's own names first, then torch.profiler's.
        if (key_ == "registers_per_thread" || key_ == "registers per thread")
            event_.registers = integer;
        else if (key_ == "static_shared_bytes")
            event_.staticShared = integer;
        else if (key_ == "dynamic_shared_bytes" || key_ == "shared memory")
            event_.dynamicShared = integer;
        else if (key_ == "local_bytes_per_thread")
            event_.localBytes = integer;
        else if (key_ == "correlation_id" || key_ == "correlation")
            event_.correlation = integer;
        else if (key_ == "bytes" || key_ == "Bytes")
            event_.bytes = integer;
        else if (key_ == "cupti_sync_type")
            event_.syncType = integer;
        else if (key_ == "device")
            event_.device = integer;
        else if (key_ == "stream")
            event_.stream = integer;
    }

    // A string pid or tid ("GPU 0", "stream 7"): a number of its own per distinct text.
    std::int64_t lane(const std::string& text) {
        auto [it, fresh] = textLanes_.try_emplace(text, 1000000 + textLanes_.size());
        return it->second;
    }

    // Thread lanes are 32-bit; the tids of host threads often are not. Those get numbers from
    // 2^31 up, in the order they first appear.
    std::uint32_t threadLane(std::int64_t pid, std::int64_t tid) {
        if (tid >= 0 && tid < 0x80000000LL)
            return static_cast<std::uint32_t>(tid);
        auto [it, fresh] = threadLanes_.try_emplace({pid, tid}, 0x80000000u + threadLanes_.size());
        return it->second;
    }

    std::int64_t nanoseconds(double micros) const {
        return originNs_ + static_cast<std::int64_t>(std::llround(micros * 1000.0));
    }

    enum class GpuKind { None, Kernel, Memcpy, Memset, Sync };
    GpuKind gpuKind() const {
        const std::string& c = event_.category;
        if (c == "kernel" || c == "Kernel" || c == "cuda_kernel" || !event_.grid.empty())
            return GpuKind::Kernel;
        if (c == "memcpy" || c == "gpu_memcpy" || c == "Memcpy")
            return GpuKind::Memcpy;
        if (c == "memset" || c == "gpu_memset" || c == "Memset")
            return GpuKind::Memset;
        if (c == "sync" && kwbExport_)
            return GpuKind::Sync;
        return GpuKind::None;
    }

    void emit() {
        if (!deviceAnnounced_ && !deviceName_.empty()) {
            TimelineRecord device;
            device.type = RecordType::Device;
            device.name = deviceName_;
            builder_.addRecord(device);
            deviceAnnounced_ = true;
        }
        const std::string& ph = event_.phase;
        if (!event_.ts || !std::isfinite(*event_.ts)) {
            ++skipped_;
            return;
        }
        if (ph == "X") {
            const double dur =
                event_.dur && std::isfinite(*event_.dur) && *event_.dur > 0 ? *event_.dur : 0.0;
            completeEvent(nanoseconds(*event_.ts), nanoseconds(*event_.ts + dur));
        } else if (ph == "B") {
            const std::uint32_t thread = threadLane(event_.pid, event_.tid);
            const std::uint32_t id = nextMarkerId_++;
            open_[{event_.pid, event_.tid}].push_back(id);
            marker(id, MarkerFlag::Start, nanoseconds(*event_.ts), thread, event_.name);
        } else if (ph == "E") {
            auto& open = open_[{event_.pid, event_.tid}];
            if (open.empty()) {
                ++skipped_; // an end without its begin
                return;
            }
            marker(open.back(), MarkerFlag::End, nanoseconds(*event_.ts), 0, {});
            open.pop_back();
        } else if (ph == "i" || ph == "I") {
            marker(nextMarkerId_++, MarkerFlag::Instant, nanoseconds(*event_.ts),
                   threadLane(event_.pid, event_.tid), event_.name);
        } else {
            ++skipped_; // metadata, counters, flows, async and object events
        }
    }

    void completeEvent(std::int64_t start, std::int64_t end) {
        const GpuKind kind = gpuKind();
        if (kind == GpuKind::None) {
            const std::uint32_t thread = threadLane(event_.pid, event_.tid);
            const std::uint32_t id = nextMarkerId_++;
            marker(id, MarkerFlag::Start, start, thread, event_.name);
            marker(id, MarkerFlag::End, end, thread, {});
            return;
        }
        TimelineRecord r;
        // kwb's export puts GPU d in process kDevicePidBase + d and stream s in thread s;
        // torch.profiler names both in the arguments.
        const std::int64_t device = event_.device ? *event_.device
                                    : kwbExport_  ? event_.pid - kDevicePidBase
                                                  : event_.pid;
        r.device = clampedUnsigned(device);
        const std::int64_t stream = event_.stream ? *event_.stream : event_.tid;
        r.stream = stream >= 0 && stream < kSynchronizationTid ? stream : 0;
        r.start = start;
        r.end = end;
        r.launch.correlationId = clampedUnsigned(event_.correlation);
        switch (kind) {
        case GpuKind::Kernel:
            r.type = RecordType::Kernel;
            r.name = !event_.mangledName.empty() ? event_.mangledName
                     : event_.name.empty()       ? std::string("(unnamed kernel)")
                                                 : event_.name;
            for (int i = 0; i < 3; ++i) {
                if (event_.grid.size() == 3)
                    r.launch.grid[i] = clampedUnsigned(event_.grid[i], 1);
                if (event_.block.size() == 3)
                    r.launch.block[i] = clampedUnsigned(event_.block[i], 1);
            }
            r.launch.registersPerThread = clampedUnsigned(event_.registers);
            r.launch.staticSharedBytes = clampedUnsigned(event_.staticShared);
            r.launch.dynamicSharedBytes = clampedUnsigned(event_.dynamicShared);
            r.launch.localBytesPerThread = clampedUnsigned(event_.localBytes);
            break;
        case GpuKind::Memcpy:
        case GpuKind::Memset:
            r.type = kind == GpuKind::Memcpy ? RecordType::Memcpy : RecordType::Memset;
            r.bytes =
                event_.bytes && *event_.bytes > 0 ? static_cast<std::uint64_t>(*event_.bytes) : 0;
            r.detail = event_.copyKind;
            break;
        case GpuKind::Sync: {
            // Synchronisations name a context, which names the device.
            r.type = RecordType::Sync;
            r.context = r.device + 1;
            r.stream = -1;
            r.detail = synchronizationType(event_.syncType.value_or(0));
            if (announcedContexts_.insert(r.context).second) {
                TimelineRecord context;
                context.type = RecordType::Context;
                context.context = r.context;
                context.device = r.device;
                builder_.addRecord(context);
            }
            break;
        }
        case GpuKind::None:
            break;
        }
        builder_.addRecord(r);
        ++events_;
    }

    void marker(std::uint32_t id, MarkerFlag flag, std::int64_t at, std::uint32_t thread,
                const std::string& name) {
        TimelineRecord r;
        r.type = RecordType::Marker;
        r.id = id;
        r.flag = flag;
        r.start = r.end = at;
        r.thread = thread;
        r.name = name;
        builder_.addRecord(r);
        if (flag != MarkerFlag::End)
            ++events_;
    }

    TimelineBuilder& builder_;
    std::vector<Where> stack_;
    std::string key_;
    std::string arrayKey_;
    std::vector<std::int64_t> array_;
    ChromeEvent event_;
    std::string error_;
    std::string deviceName_;
    std::int64_t originNs_ = 0;
    bool kwbExport_ = false;
    bool deviceAnnounced_ = false;
    bool sawEvents_ = false;
    std::uint64_t events_ = 0;
    std::uint64_t skipped_ = 0;
    std::uint32_t nextMarkerId_ = 1;
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::uint32_t>> open_;
    std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> threadLanes_;
    std::map<std::string, std::int64_t> textLanes_;
    std::set<std::uint32_t> announcedContexts_;
};

} // namespace

ChromeTraceRead readChromeTrace(std::istream& in, TimelineBuilder& builder) {
    ChromeTraceHandler handler(builder);
    ChromeTraceRead read;
    const bool parsed = json::sax_parse(in, &handler, json::input_format_t::json, true, true);
    read.events = handler.events();
    read.skipped = handler.skipped();
    read.kwbExport = handler.kwbExport();
    if (!parsed) {
        read.error = handler.error().empty() ? "the trace ended early" : handler.error();
        return read;
    }
    if (!handler.sawEvents()) {
        read.error = "no \"traceEvents\" array: not a Chrome trace-event document";
        return read;
    }
    read.ok = true;
    return read;
}

} // namespace kwb::timeline
