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

#if KWB_HAVE_SIMDJSON
// Without exceptions a simdjson result cannot be used as its value, where it would throw on an
// error: every access must go through get() and check the error (the fuzzer found one that
// did not).
#define SIMDJSON_EXCEPTIONS 0
#include <simdjson.h>
#endif

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
    std::string pidText, tidText; // a pid or tid given as text ("GPU 0")
    // args
    std::vector<std::int64_t> grid, block;
    std::optional<std::int64_t> registers, staticShared, dynamicShared, localBytes, correlation,
        bytes, syncType, device, stream;
    std::string mangledName, copyKind;
};

// A scalar as either parser hands it over: an integer when it is one (also 3.0), its number,
// or its text.
struct Scalar {
    std::optional<std::int64_t> integer;
    std::optional<double> number;
    std::string* text = nullptr;
};

void setEventField(ChromeEvent& event, std::string_view key, const Scalar& v) {
    if (key == "name" && v.text)
        event.name.swap(*v.text);
    else if (key == "cat" && v.text)
        event.category.swap(*v.text);
    else if (key == "ph" && v.text)
        event.phase.swap(*v.text);
    else if (key == "ts" && v.number)
        event.ts = *v.number;
    else if (key == "dur" && v.number)
        event.dur = *v.number;
    else if (key == "pid" && v.integer)
        event.pid = *v.integer;
    else if (key == "pid" && v.text)
        event.pidText.swap(*v.text);
    else if (key == "tid" && v.integer)
        event.tid = *v.integer;
    else if (key == "tid" && v.text)
        event.tidText.swap(*v.text);
}

void setArgument(ChromeEvent& event, std::string_view key, const Scalar& v) {
    if (v.text) {
        if (key == "mangled_name")
            event.mangledName.swap(*v.text);
        else if (key == "copy_kind")
            event.copyKind.swap(*v.text);
        return;
    }
    if (!v.integer)
        return;
    const auto integer = v.integer;
    // kwb's own names first, then torch.profiler's.
    if (key == "registers_per_thread" || key == "registers per thread")
        event.registers = integer;
    else if (key == "static_shared_bytes")
        event.staticShared = integer;
    else if (key == "dynamic_shared_bytes" || key == "shared memory")
        event.dynamicShared = integer;
    else if (key == "local_bytes_per_thread")
        event.localBytes = integer;
    else if (key == "correlation_id" || key == "correlation")
        event.correlation = integer;
    else if (key == "bytes" || key == "Bytes")
        event.bytes = integer;
    else if (key == "cupti_sync_type")
        event.syncType = integer;
    else if (key == "device")
        event.device = integer;
    else if (key == "stream")
        event.stream = integer;
}

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

std::optional<std::int64_t> integralOf(double v) {
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e18)
        return static_cast<std::int64_t>(v);
    return std::nullopt;
}

std::uint32_t clampedUnsigned(std::optional<std::int64_t> value, std::uint32_t fallback = 0) {
    if (!value || *value < 0)
        return fallback;
    return static_cast<std::uint32_t>(
        std::min<std::int64_t>(*value, std::numeric_limits<std::uint32_t>::max()));
}

// Turns events, as either parser hands them over, into timeline records.
class ChromeEventSink {
public:
    explicit ChromeEventSink(TimelineBuilder& builder) : builder_(builder) {}

    void otherData(std::string_view key, const Scalar& v) {
        if (key == "format" && v.text)
            kwbExport_ = *v.text == "kwb-timeline/1";
        else if (key == "origin_ns" && v.integer)
            originNs_ = *v.integer;
        else if (key == "device_name" && v.text)
            deviceName_ = *v.text;
    }

    void take(ChromeEvent& event) {
        if (!event.pidText.empty())
            event.pid = lane(event.pidText);
        if (!event.tidText.empty())
            event.tid = lane(event.tidText);
        event_ = &event;
        emit();
        event_ = nullptr;
    }

    std::uint64_t events() const { return events_; }
    std::uint64_t skipped() const { return skipped_; }
    bool kwbExport() const { return kwbExport_; }

private:
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
        const std::string& c = event_->category;
        if (c == "kernel" || c == "Kernel" || c == "cuda_kernel" || !event_->grid.empty())
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
        const std::string& ph = event_->phase;
        if (!event_->ts || !std::isfinite(*event_->ts)) {
            ++skipped_;
            return;
        }
        if (ph == "X") {
            const double dur =
                event_->dur && std::isfinite(*event_->dur) && *event_->dur > 0 ? *event_->dur : 0.0;
            completeEvent(nanoseconds(*event_->ts), nanoseconds(*event_->ts + dur));
        } else if (ph == "B") {
            const std::uint32_t thread = threadLane(event_->pid, event_->tid);
            const std::uint32_t id = nextMarkerId_++;
            open_[{event_->pid, event_->tid}].push_back(id);
            marker(id, MarkerFlag::Start, nanoseconds(*event_->ts), thread, event_->name);
        } else if (ph == "E") {
            auto& open = open_[{event_->pid, event_->tid}];
            if (open.empty()) {
                ++skipped_; // an end without its begin
                return;
            }
            marker(open.back(), MarkerFlag::End, nanoseconds(*event_->ts), 0, {});
            open.pop_back();
        } else if (ph == "i" || ph == "I") {
            marker(nextMarkerId_++, MarkerFlag::Instant, nanoseconds(*event_->ts),
                   threadLane(event_->pid, event_->tid), event_->name);
        } else {
            ++skipped_; // metadata, counters, flows, async and object events
        }
    }

    void completeEvent(std::int64_t start, std::int64_t end) {
        const GpuKind kind = gpuKind();
        if (kind == GpuKind::None) {
            const std::uint32_t thread = threadLane(event_->pid, event_->tid);
            const std::uint32_t id = nextMarkerId_++;
            marker(id, MarkerFlag::Start, start, thread, event_->name);
            marker(id, MarkerFlag::End, end, thread, {});
            return;
        }
        TimelineRecord r;
        // kwb's export puts GPU d in process kDevicePidBase + d and stream s in thread s;
        // torch.profiler names both in the arguments.
        const std::int64_t device = event_->device ? *event_->device
                                    : kwbExport_   ? event_->pid - kDevicePidBase
                                                   : event_->pid;
        r.device = clampedUnsigned(device);
        const std::int64_t stream = event_->stream ? *event_->stream : event_->tid;
        r.stream = stream >= 0 && stream < kSynchronizationTid ? stream : 0;
        r.start = start;
        r.end = end;
        r.launch.correlationId = clampedUnsigned(event_->correlation);
        switch (kind) {
        case GpuKind::Kernel:
            r.type = RecordType::Kernel;
            r.name = !event_->mangledName.empty() ? event_->mangledName
                     : event_->name.empty()       ? std::string("(unnamed kernel)")
                                                  : event_->name;
            for (int i = 0; i < 3; ++i) {
                if (event_->grid.size() == 3)
                    r.launch.grid[i] = clampedUnsigned(event_->grid[i], 1);
                if (event_->block.size() == 3)
                    r.launch.block[i] = clampedUnsigned(event_->block[i], 1);
            }
            r.launch.registersPerThread = clampedUnsigned(event_->registers);
            r.launch.staticSharedBytes = clampedUnsigned(event_->staticShared);
            r.launch.dynamicSharedBytes = clampedUnsigned(event_->dynamicShared);
            r.launch.localBytesPerThread = clampedUnsigned(event_->localBytes);
            break;
        case GpuKind::Memcpy:
        case GpuKind::Memset:
            r.type = kind == GpuKind::Memcpy ? RecordType::Memcpy : RecordType::Memset;
            r.bytes = event_->bytes && *event_->bytes > 0
                          ? static_cast<std::uint64_t>(*event_->bytes)
                          : 0;
            r.detail = event_->copyKind;
            break;
        case GpuKind::Sync: {
            // Synchronisations name a context, which names the device.
            r.type = RecordType::Sync;
            r.context = r.device + 1;
            r.stream = -1;
            r.detail = synchronizationType(event_->syncType.value_or(0));
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
    const ChromeEvent* event_ = nullptr;
    std::string deviceName_;
    std::int64_t originNs_ = 0;
    bool kwbExport_ = false;
    bool deviceAnnounced_ = false;
    std::uint64_t events_ = 0;
    std::uint64_t skipped_ = 0;
    std::uint32_t nextMarkerId_ = 1;
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::uint32_t>> open_;
    std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> threadLanes_;
    std::map<std::string, std::int64_t> textLanes_;
    std::set<std::uint32_t> announcedContexts_;
};

// nlohmann-json's SAX events, streamed: where in the document each value sits, and the event
// being filled.
class ChromeTraceHandler final : public nlohmann::json_sax<json> {
public:
    explicit ChromeTraceHandler(ChromeEventSink& sink) : sink_(sink) {}

    bool null() override { return scalar({}); }
    bool boolean(bool) override { return scalar({}); }
    bool number_integer(number_integer_t v) override {
        return scalar({v, static_cast<double>(v), nullptr});
    }
    bool number_unsigned(number_unsigned_t v) override {
        const auto max = static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max());
        return scalar(
            {v <= max ? std::optional<std::int64_t>(static_cast<std::int64_t>(v)) : std::nullopt,
             static_cast<double>(v), nullptr});
    }
    bool number_float(number_float_t v, const string_t&) override {
        return scalar({integralOf(v), v, nullptr});
    }
    bool string(string_t& v) override { return scalar({std::nullopt, std::nullopt, &v}); }
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
            sink_.take(event_);
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

    bool scalar(const Scalar& v) {
        if (stack_.empty())
            return true; // a bare scalar document: no events, reported by the caller
        switch (top()) {
        case Where::Event:
            setEventField(event_, key_, v);
            break;
        case Where::Args:
            setArgument(event_, key_, v);
            break;
        case Where::ArgsArray:
            if (v.integer)
                array_.push_back(*v.integer);
            break;
        case Where::OtherData:
            sink_.otherData(key_, v);
            break;
        default:
            break;
        }
        return true;
    }

    ChromeEventSink& sink_;
    std::vector<Where> stack_;
    std::string key_;
    std::string arrayKey_;
    std::vector<std::int64_t> array_;
    ChromeEvent event_;
    std::string error_;
    bool sawEvents_ = false;
};

#if KWB_HAVE_SIMDJSON
namespace od = simdjson::ondemand;

// A scalar of simdjson's; arrays, objects, booleans and nulls give nothing (and are skipped).
bool readScalar(od::value& value, Scalar& out, std::string& text) {
    od::json_type type;
    if (value.type().get(type))
        return false;
    if (type == od::json_type::string) {
        std::string_view view;
        if (value.get_string().get(view))
            return false;
        text.assign(view);
        out.text = &text;
    } else if (type == od::json_type::number) {
        od::number_type kind;
        if (value.get_number_type().get(kind))
            return false;
        if (kind == od::number_type::signed_integer) {
            std::int64_t integer = 0;
            if (value.get_int64().get(integer))
                return false;
            out.integer = integer;
            out.number = static_cast<double>(integer);
        } else {
            double number = 0;
            if (value.get_double().get(number))
                return false;
            out.number = number;
            out.integer = integralOf(number);
        }
    }
    return true;
}

class SimdjsonChromeReader {
public:
    SimdjsonChromeReader(ChromeEventSink& sink, std::stop_token stop, const char* base,
                         std::size_t size, const ChromeTraceProgress& progress)
        : sink_(sink), stop_(std::move(stop)), base_(base), size_(size), progress_(progress) {}

    // False with `error` set when the document is not a trace; `stopped` after a stop.
    bool read(od::document& document) {
        od::json_type type;
        if (document.type().get(type))
            return fail(document, "not valid JSON");
        if (type == od::json_type::array) {
            od::array events;
            if (document.get_array().get(events))
                return fail(document, "not valid JSON");
            sawEvents = true;
            return readEvents(document, events);
        }
        if (type != od::json_type::object)
            return fail(document, "no \"traceEvents\" array: not a Chrome trace-event document");
        od::object top;
        if (document.get_object().get(top))
            return fail(document, "not valid JSON");
        for (auto field : top) {
            std::string_view key;
            if (field.unescaped_key().get(key))
                return fail(document, "not valid JSON");
            if (key == "traceEvents") {
                od::array events;
                if (field.value().get_array().get(events))
                    return fail(document, "\"traceEvents\" is not an array");
                sawEvents = true;
                if (!readEvents(document, events))
                    return false;
            } else if (key == "otherData") {
                od::object other;
                if (field.value().get_object().get(other))
                    continue;
                for (auto entry : other) {
                    std::string_view name;
                    od::value value;
                    Scalar scalar;
                    if (entry.unescaped_key().get(name) || entry.value().get(value) ||
                        !readScalar(value, scalar, text_))
                        return fail(document, "not valid JSON");
                    sink_.otherData(name, scalar);
                }
            }
        }
        // Text after the document ("{...} junk") is damage, as for nlohmann-json.
        const char* after = nullptr;
        if (document.current_location().get(after) == simdjson::SUCCESS)
            return fail(document, "text after the end of the JSON document");
        if (!sawEvents)
            error = "no \"traceEvents\" array: not a Chrome trace-event document";
        return sawEvents;
    }

    std::string error;
    bool stopped = false;
    bool sawEvents = false;

private:
    bool fail(od::document& document, const std::string& what) {
        const char* at = nullptr;
        std::size_t offset = size_;
        if (document.current_location().get(at) == simdjson::SUCCESS && at >= base_)
            offset = static_cast<std::size_t>(at - base_);
        error = what + " (near byte " + std::to_string(offset) + ")";
        return false;
    }

    bool readEvents(od::document& document, od::array& events) {
        std::uint64_t count = 0;
        for (auto element : events) {
            od::object object;
            if (element.get_object().get(object)) {
                // A non-object entry: skipped, unless the document itself is broken there.
                if (!document.is_alive())
                    return fail(document, "not valid JSON");
                continue;
            }
            event_ = ChromeEvent();
            if (!readEvent(object))
                return fail(document, "not valid JSON");
            sink_.take(event_);
            if (++count % 4096 == 0) {
                if (stop_.stop_requested()) {
                    stopped = true;
                    return false;
                }
                const char* at = nullptr;
                if (progress_ && document.current_location().get(at) == simdjson::SUCCESS)
                    progress_(static_cast<std::size_t>(at - base_), size_);
            }
        }
        return true;
    }

    bool readEvent(od::object& object) {
        for (auto field : object) {
            std::string_view key;
            od::value value;
            if (field.unescaped_key().get(key) || field.value().get(value))
                return false;
            if (key == "args") {
                od::object args;
                if (value.get_object().get(args))
                    continue; // args of another shape: nothing a timeline reads
                if (!readArgs(args))
                    return false;
                continue;
            }
            Scalar scalar;
            if (!readScalar(value, scalar, text_))
                return false;
            setEventField(event_, key, scalar);
        }
        return true;
    }

    bool readArgs(od::object& args) {
        for (auto field : args) {
            std::string_view key;
            od::value value;
            if (field.unescaped_key().get(key) || field.value().get(value))
                return false;
            if (key == "grid" || key == "block") {
                od::array array;
                if (value.get_array().get(array))
                    continue;
                std::vector<std::int64_t>& out = key == "grid" ? event_.grid : event_.block;
                for (auto element : array) {
                    od::value member;
                    Scalar scalar;
                    if (std::move(element).get(member) || !readScalar(member, scalar, text_))
                        return false;
                    if (scalar.integer)
                        out.push_back(*scalar.integer);
                }
                continue;
            }
            Scalar scalar;
            if (!readScalar(value, scalar, text_))
                return false;
            setArgument(event_, key, scalar);
        }
        return true;
    }

    ChromeEventSink& sink_;
    std::stop_token stop_;
    const char* base_;
    std::size_t size_;
    const ChromeTraceProgress& progress_;
    ChromeEvent event_;
    std::string text_;
};
#endif

} // namespace

ChromeTraceRead readChromeTrace(std::istream& in, TimelineBuilder& builder) {
    ChromeEventSink sink(builder);
    ChromeTraceHandler handler(sink);
    ChromeTraceRead read;
    const bool parsed = json::sax_parse(in, &handler, json::input_format_t::json, true, true);
    read.events = sink.events();
    read.skipped = sink.skipped();
    read.kwbExport = sink.kwbExport();
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

bool chromeTraceBufferSupported() {
    return KWB_HAVE_SIMDJSON != 0;
}

ChromeTraceRead readChromeTraceBuffer(std::string& text, TimelineBuilder& builder,
                                      std::stop_token stop, const ChromeTraceProgress& progress) {
    ChromeTraceRead read;
#if KWB_HAVE_SIMDJSON
    const std::size_t size = text.size();
    text.append(simdjson::SIMDJSON_PADDING, '\0');
    ChromeEventSink sink(builder);
    SimdjsonChromeReader reader(sink, std::move(stop), text.data(), size, progress);
    od::parser parser;
    od::document document;
    if (parser.iterate(text.data(), size, text.size()).get(document)) {
        read.error = "not valid JSON";
    } else {
        read.ok = reader.read(document);
        read.error = reader.error;
        read.cancelled = reader.stopped;
    }
    text.resize(size);
    read.events = sink.events();
    read.skipped = sink.skipped();
    read.kwbExport = sink.kwbExport();
#else
    (void)text;
    (void)builder;
    (void)stop;
    (void)progress;
    read.error = "this build reads Chrome traces without simdjson (readChromeTrace)";
#endif
    return read;
}

} // namespace kwb::timeline
