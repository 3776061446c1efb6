#include "engine/counters/roofline.h"

#include <algorithm>
#include <optional>

namespace kwb::counters {
namespace {

// Per cycle of the SM sub-partitions' clock, summed over the device.
std::optional<double> perCycle(const KernelCounters& k, const std::string& op) {
    return k.rawBase("smsp__sass_thread_inst_executed_op_" + op + "_pred_on.sum.per_cycle_elapsed");
}

std::optional<RooflinePoint> pointFor(const KernelCounters& k, const std::string& precision,
                                      const std::string& add, const std::string& mul,
                                      const std::string& fma) {
    const auto adds = perCycle(k, add), muls = perCycle(k, mul), fmas = perCycle(k, fma);
    const auto clock = k.rawBase("smsp__cycles_elapsed.avg.per_second");
    const auto peakFmas =
        k.rawBase("sm__sass_thread_inst_executed_op_" + fma + "_pred_on.sum.peak_sustained");
    const auto dram = k.rawBase("dram__bytes.sum.per_second");
    const auto dramPeakPerCycle = k.rawBase("dram__bytes.sum.peak_sustained");
    const auto dramClock = k.rawBase("dram__cycles_elapsed.avg.per_second");
    if (!adds || !muls || !fmas || !clock || !peakFmas || !dram || !dramPeakPerCycle ||
        !dramClock || *peakFmas <= 0 || *clock <= 0)
        return std::nullopt;
    RooflinePoint p;
    p.precision = precision;
    p.flopsPerSecond = (*adds + *muls + 2 * *fmas) * *clock;
    p.peakFlopsPerSecond = 2 * *peakFmas * *clock;
    p.dramBytesPerSecond = *dram;
    p.peakDramBytesPerSecond = *dramPeakPerCycle * *dramClock;
    return p;
}

} // namespace

double RooflinePoint::intensity() const {
    return dramBytesPerSecond > 0 ? flopsPerSecond / dramBytesPerSecond : 0.0;
}

double RooflinePoint::ridgeIntensity() const {
    return peakDramBytesPerSecond > 0 ? peakFlopsPerSecond / peakDramBytesPerSecond : 0.0;
}

double RooflinePoint::attainableFlopsPerSecond() const {
    if (dramBytesPerSecond <= 0)
        return peakFlopsPerSecond;
    return std::min(peakFlopsPerSecond, intensity() * peakDramBytesPerSecond);
}

double RooflinePoint::shareOfAttainable() const {
    const double roof = attainableFlopsPerSecond();
    return roof > 0 ? flopsPerSecond / roof : 0.0;
}

std::vector<RooflinePoint> rooflinePoints(const KernelCounters& kernel) {
    std::vector<RooflinePoint> points;
    if (auto p = pointFor(kernel, "FP32", "fadd", "fmul", "ffma"))
        points.push_back(*p);
    if (auto p = pointFor(kernel, "FP64", "dadd", "dmul", "dfma"))
        points.push_back(*p);
    return points;
}

} // namespace kwb::counters
