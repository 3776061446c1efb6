#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <stop_token>
#include <string>

namespace kwb::timeline {

class TimelineBuilder;

struct ChromeTraceRead {
    bool ok = false;
    std::string error;         // why the document could not be read (with the byte offset)
    std::uint64_t events = 0;  // events that became timeline records
    std::uint64_t skipped = 0; // events of phases a timeline does not draw (flows, counters)
    bool kwbExport = false;    // written by kwb (otherData.format "kwb-timeline/1")
    bool cancelled = false;    // readChromeTraceBuffer: stopped
};

// Bytes parsed so far and the document's size.
using ChromeTraceProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Reads a Chrome trace-event JSON document into `builder`: kwb's own export (`kwb timeline
// --out`), torch.profiler's export_chrome_trace, and anything else chrome://tracing or
// Perfetto's JSON import opens, as an object with "traceEvents" or a bare array of events.
// Streamed (nlohmann-json's SAX parser): memory stays at the timeline's own size however large
// the document. GPU work ("X" events of category kernel, memcpy, memset, sync, or with a launch
// grid) goes on its device's stream lanes; every other "X" event and "B"/"E" pair becomes a
// range on its thread's lane, instants ("i"/"I") a zero-length range.
ChromeTraceRead readChromeTrace(std::istream& in, TimelineBuilder& builder);

// The same from the whole document in memory, with simdjson: several times faster than
// the stream for the document's size in memory. `text` gets
// simdjson's padding appended while it is read and is given back as it was. Stops between
// events when `stop` is requested (cancelled). Only where the build has simdjson
// (chromeTraceBufferSupported()).
bool chromeTraceBufferSupported();
ChromeTraceRead readChromeTraceBuffer(std::string& text, TimelineBuilder& builder,
                                      std::stop_token stop = {},
                                      const ChromeTraceProgress& progress = {});

} // namespace kwb::timeline
