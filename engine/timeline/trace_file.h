#pragma once

#include "engine/timeline/flat_json_object.h"
#include "engine/timeline/kernel_timeline.h"

#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::timeline {

// What a trace file holds, told from its first bytes.
enum class TraceFormat {
    Unknown,
    CuptiRecords, // kwb-cupti/1 record lines (the injection library's output)
    ChromeJson,   // Chrome trace-event JSON (kwb's export, torch.profiler, chrome://tracing)
};
std::string toString(TraceFormat format);

// The format of a file that begins with `head` (a few kilobytes are plenty), or Unknown with
// the reason in `why` (compressed, Perfetto's protobuf, not JSON at all).
TraceFormat detectTraceFormat(std::string_view head, std::string* why = nullptr);

struct LoadedTrace {
    TimelineSnapshot timeline; // null when the file could not be read or the load was stopped
    TraceFormat format = TraceFormat::Unknown;
    std::string error; // why there is no timeline (not set for a stop)
    bool cancelled = false;
    std::uint64_t bytes = 0;               // the file's size
    std::uint64_t records = 0;             // record lines or trace events read
    std::uint64_t malformed = 0;           // record lines that were not records
    std::uint64_t skipped = 0;             // trace events a timeline does not draw
    bool sawHeader = false;                // record files: the header line and the end line, whose
    bool sawEnd = false;                   // absence means a writer that was cut off
    std::vector<std::string> writerErrors; // "error" lines the injection library wrote
};

// Called now and then while a file loads, with bytes read so far and the file's size.
using TraceProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Reads a trace file of either format into a timeline: the GUI's File > Open Trace, its
// --trace option and drag-and-drop, and `kwb timeline --records`. Runs on the caller's thread
// (a worker); `stop` ends it between blocks of lines or events.
// `chromeParser`: Fastest reads a Chrome trace whole and parses it with simdjson where the
// build has it; Nlohmann streams it through nlohmann-json's SAX parser (less memory, slower;
// tests compare the two).
LoadedTrace loadTraceFile(const std::string& path, std::stop_token stop = {},
                          const TraceProgress& progress = {},
                          FlatJsonParser chromeParser = FlatJsonParser::Fastest);

} // namespace kwb::timeline
