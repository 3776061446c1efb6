#pragma once

#include <cstdint>
#include <istream>
#include <string>

namespace kwb::timeline {

class TimelineBuilder;

struct ChromeTraceRead {
    bool ok = false;
    std::string error;         // why the document could not be read (with the byte offset)
    std::uint64_t events = 0;  // events that became timeline records
    std::uint64_t skipped = 0; // events of phases a timeline does not draw (flows, counters)
    bool kwbExport = false;    // written by kwb (otherData.format "kwb-timeline/1")
};

// Reads a Chrome trace-event JSON document into `builder`: kwb's own export (`kwb timeline
// --out`), torch.profiler's export_chrome_trace, and anything else chrome://tracing or
// Perfetto's JSON import opens, as an object with "traceEvents" or a bare array of events.
// Streamed (nlohmann-json's SAX parser): memory stays at the timeline's own size however large
// the document. GPU work ("X" events of category kernel, memcpy, memset, sync, or with a launch
// grid) goes on its device's stream lanes; every other "X" event and "B"/"E" pair becomes a
// range on its thread's lane, instants ("i"/"I") a zero-length range.
ChromeTraceRead readChromeTrace(std::istream& in, TimelineBuilder& builder);

} // namespace kwb::timeline
