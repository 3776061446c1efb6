#pragma once

#include "engine/counters/ncu_report.h"

#include <string>
#include <vector>

namespace kwb::counters {

// A kernel on the DRAM roofline of one precision, from the raw page's counters (what ncu's
// SpeedOfLight_RooflineChart section collects): floating-point operations per second (an FMA
// is two) against the DRAM bytes per second, and the device's sustained peaks of both.
struct RooflinePoint {
    std::string precision; // "FP32" or "FP64"
    double flopsPerSecond = 0;
    double peakFlopsPerSecond = 0;
    double dramBytesPerSecond = 0;
    double peakDramBytesPerSecond = 0;

    double intensity() const; // flop per DRAM byte; 0 when no DRAM traffic was counted
    // Where the two roofs meet: below it a kernel can at best be memory bound.
    double ridgeIntensity() const;
    bool memoryBound() const { return intensity() < ridgeIntensity(); }
    // The roof above the kernel's intensity, and how much of it the kernel reached.
    double attainableFlopsPerSecond() const;
    double shareOfAttainable() const;
};

// The FP32 and FP64 points that the counters allow (a precision whose peak is missing is left
// out); empty when the report was not collected with the roofline section.
std::vector<RooflinePoint> rooflinePoints(const KernelCounters& kernel);

} // namespace kwb::counters
