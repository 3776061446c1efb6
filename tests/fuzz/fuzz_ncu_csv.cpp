// Nsight Compute CSV that `kwb counters` and the counters view read: the details page, the raw
// page on top of it, the roofline and a comparison of the report with itself.
#include "engine/counters/ncu_comparison.h"
#include "engine/counters/ncu_report.h"
#include "engine/counters/roofline.h"
#include "tests/fuzz/fuzz_input.h"

using namespace kwb::counters;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = kwb::fuzz::asText(data, size);
    std::string error;
    auto report = parseNcuDetails(text, &error);
    // Every outcome is a report with a kernel or a reason, never neither.
    if (report ? report->kernels.empty() : error.empty())
        __builtin_trap();
    if (!report)
        return 0;
    NcuReport withRaw = *report;
    if (!addNcuRawPage(withRaw, text, &error) && error.empty())
        __builtin_trap();
    for (const KernelCounters& k : withRaw.kernels)
        for (const RooflinePoint& p : rooflinePoints(k))
            (void)p.shareOfAttainable();
    const auto pairs = compareReports(*report, *report);
    if (pairs.size() != report->kernels.size())
        __builtin_trap(); // a report pairs every kernel with itself
    return 0;
}
