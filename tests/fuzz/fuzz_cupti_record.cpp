// A CUPTI record file (written by the injection library inside a profiled process the candidate
// controls): line parsing and the whole timeline build.
#include "engine/timeline/record_reader.h"
#include "engine/timeline/timeline_builder.h"
#include "tests/fuzz/fuzz_input.h"

using namespace kwb::timeline;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = kwb::fuzz::asText(data, size);
    TimelineBuilder builder;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        const std::string_view line = text.substr(start, end - start);
        (void)parseRecordLine(line);
        builder.addLine(line);
        start = end + 1;
    }
    (void)builder.finish();
    return 0;
}
