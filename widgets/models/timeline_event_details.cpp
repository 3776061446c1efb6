#include "widgets/models/timeline_event_details.h"

#include "engine/timeline/kernel_timeline.h"
#include "engine/timeline/occupancy_estimate.h"
#include "widgets/models/timeline_format.h"

#include <QStringList>

namespace kwb::ui {

using kwb::timeline::EventKind;
using kwb::timeline::TimelineEvent;

namespace {

QString laneLabel(const kwb::timeline::KernelTimeline& timeline, const timeline::TimelineHit& hit) {
    const auto lane = static_cast<std::size_t>(hit.lane);
    if (hit.kind == timeline::LaneRow::Kind::Range)
        return QString::fromStdString(timeline.ranges[lane].label);
    return QString::fromStdString(timeline.streams[lane].label);
}

const TimelineEvent& eventOf(const kwb::timeline::KernelTimeline& timeline,
                             const timeline::TimelineHit& hit) {
    const auto lane = static_cast<std::size_t>(hit.lane);
    if (hit.kind == timeline::LaneRow::Kind::Range)
        return timeline.ranges[lane].events[hit.eventIndex];
    return timeline.streams[lane].events[hit.eventIndex];
}

QString dims(const std::uint32_t (&v)[3]) {
    return QStringLiteral("(%1, %2, %3)").arg(v[0]).arg(v[1]).arg(v[2]);
}

QString bytes(std::uint64_t n) {
    if (n >= 1024 && n % 1024 == 0)
        return QStringLiteral("%1 KiB").arg(n / 1024);
    if (n >= 1024)
        return QStringLiteral("%1 KiB").arg(static_cast<double>(n) / 1024.0, 0, 'f', 1);
    return QStringLiteral("%1 B").arg(n);
}

void describeKernel(const kwb::timeline::KernelTimeline& timeline, const TimelineEvent& event,
                    QStringList& lines) {
    if (event.detail >= timeline.launches.size())
        return;
    const kwb::timeline::KernelLaunch& launch = timeline.launches[event.detail];
    const std::uint64_t threads =
        std::uint64_t{launch.block[0]} * launch.block[1] * launch.block[2];
    lines << QStringLiteral("Grid: %1").arg(dims(launch.grid));
    lines << QStringLiteral("Block: %1 = %2 threads").arg(dims(launch.block)).arg(threads);
    lines << QStringLiteral("Registers per thread: %1").arg(launch.registersPerThread);
    lines << QStringLiteral("Shared memory: %1 static + %2 dynamic")
                 .arg(bytes(launch.staticSharedBytes), bytes(launch.dynamicSharedBytes));
    if (launch.localBytesPerThread > 0)
        lines
            << QStringLiteral("Local memory per thread: %1").arg(bytes(launch.localBytesPerThread));
    const auto estimate = kwb::timeline::estimateOccupancy(
        static_cast<std::uint32_t>(std::min<std::uint64_t>(threads, UINT32_MAX)),
        launch.registersPerThread, launch.staticSharedBytes + launch.dynamicSharedBytes);
    lines << QStringLiteral("Occupancy estimate (sm_90): %1% — %2 blocks/SM, %3/%4 warps, "
                            "limited by %5")
                 .arg(estimate.occupancy * 100.0, 0, 'f', 1)
                 .arg(estimate.blocksPerSm)
                 .arg(estimate.activeWarpsPerSm)
                 .arg(estimate.maxWarpsPerSm)
                 .arg(QString::fromStdString(kwb::timeline::toString(estimate.limiter)));
    if (launch.correlationId != 0)
        lines << QStringLiteral("Correlation id: %1").arg(launch.correlationId);
}

} // namespace

QString shortKernelName(const QString& demangled) {
    QString name = demangled;
    // Parameters first, then template arguments (which may contain parentheses themselves).
    int depth = 0;
    QString out;
    out.reserve(name.size());
    for (const QChar c : name) {
        if (c == QLatin1Char('<') || c == QLatin1Char('('))
            ++depth;
        else if (c == QLatin1Char('>') || c == QLatin1Char(')'))
            depth = depth > 0 ? depth - 1 : 0;
        else if (depth == 0)
            out += c;
    }
    out = out.trimmed();
    // Drop a return type such as "void ": the name is the last space-separated word.
    const int space = out.lastIndexOf(QLatin1Char(' '));
    if (space >= 0)
        out = out.mid(space + 1);
    return out.isEmpty() ? demangled : out;
}

QString describeHit(const kwb::timeline::KernelTimeline& timeline,
                    const timeline::TimelineHit& hit) {
    QStringList lines;
    const TimelineEvent& first = eventOf(timeline, hit);
    if (hit.folded()) {
        lines << QStringLiteral("%1 events folded (each narrower than a pixel or two)")
                     .arg(hit.count);
        lines << QStringLiteral("First: %1")
                     .arg(QString::fromStdString(timeline.displayName(first.nameId)));
        lines << QStringLiteral("Span: %1, from %2 to %3")
                     .arg(formatDuration(static_cast<double>(hit.endNs - hit.startNs)),
                          formatDuration(static_cast<double>(hit.startNs)),
                          formatDuration(static_cast<double>(hit.endNs)));
        lines << QStringLiteral("Lane: %1").arg(laneLabel(timeline, hit));
        lines << QStringLiteral("Click or zoom in to see them one by one.");
        return lines.join(QLatin1Char('\n'));
    }
    lines << QString::fromStdString(timeline.displayName(first.nameId));
    lines << QStringLiteral("%1 on %2")
                 .arg(QString::fromStdString(kwb::timeline::toString(first.kind)),
                      laneLabel(timeline, hit));
    lines << QStringLiteral("Duration: %1")
                 .arg(formatDuration(static_cast<double>(first.durationNs())));
    lines << QStringLiteral("Start: %1").arg(formatDuration(static_cast<double>(first.startNs)));
    if (first.kind == EventKind::Kernel)
        describeKernel(timeline, first, lines);
    else if ((first.kind == EventKind::Memcpy || first.kind == EventKind::Memset) &&
             first.detail < timeline.transfers.size()) {
        const auto& transfer = timeline.transfers[first.detail];
        lines << QStringLiteral("%1: %2").arg(QString::fromStdString(transfer.copyKind),
                                              bytes(transfer.bytes));
    } else if (first.kind == EventKind::Range)
        lines << QStringLiteral("Nesting depth: %1").arg(first.detail);
    return lines.join(QLatin1Char('\n'));
}

} // namespace kwb::ui
