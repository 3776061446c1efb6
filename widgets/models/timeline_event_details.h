#pragma once

#include "engine/timeline/timeline_hit_test.h"

#include <QString>

namespace kwb::timeline {
struct KernelTimeline;
}

namespace kwb::ui {

// The text a hover tooltip and the details panel show for what the user points at: for a
// kernel its launch configuration, resources and an occupancy estimate; for a folded block how
// many events it holds and the span they cover; for an NVTX range its name and duration.
// Plain text, one fact per line, so it can be copied into a bug report.
QString describeHit(const kwb::timeline::KernelTimeline& timeline,
                    const timeline::TimelineHit& hit);

// The kernel name without return type, template arguments or parameters, for drawing inside a
// box: "void at::native::foo<float, 4>(float*)" reads "at::native::foo".
QString shortKernelName(const QString& demangled);

} // namespace kwb::ui
