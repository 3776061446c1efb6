#include "widgets/models/line_diff.h"

// Qt has no diff algorithm, so the shortest edit script comes from dtl (Debian libdtl-dev,
// header-only): Wu's O(NP) algorithm over the two line sequences.
#include <QStringList>
#include <algorithm>
#include <dtl/dtl.hpp>

namespace kwb::ui {
namespace {

std::vector<QString> splitLines(const QString& text) {
    QStringList parts = text.split(u'\n');
    if (!parts.isEmpty() && parts.last().isEmpty())
        parts.removeLast(); // "a\n" is one line, not two
    std::vector<QString> lines;
    lines.reserve(static_cast<std::size_t>(parts.size()));
    for (QString& part : parts) {
        if (part.endsWith(u'\r'))
            part.chop(1);
        lines.push_back(std::move(part));
    }
    return lines;
}

} // namespace

std::vector<DiffLine> diffLines(const QString& before, const QString& after) {
    const std::vector<QString> a = splitLines(before);
    const std::vector<QString> b = splitLines(after);
    dtl::Diff<QString, std::vector<QString>> diff(a, b, /*deletesFirst=*/true);
    diff.compose();
    std::vector<DiffLine> lines;
    for (const auto& [text, info] : diff.getSes().getSequence()) {
        DiffLine line;
        line.text = text;
        if (info.type == dtl::SES_COMMON) {
            line.kind = DiffLineKind::Context;
            line.oldLine = static_cast<int>(info.beforeIdx);
            line.newLine = static_cast<int>(info.afterIdx);
        } else if (info.type == dtl::SES_DELETE) {
            line.kind = DiffLineKind::Removed;
            line.oldLine = static_cast<int>(info.beforeIdx);
        } else {
            line.kind = DiffLineKind::Added;
            line.newLine = static_cast<int>(info.afterIdx);
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

std::vector<DiffLine> unifiedDiff(const QString& before, const QString& after, int context) {
    const std::vector<DiffLine> all = diffLines(before, after);
    const int n = static_cast<int>(all.size());
    std::vector<DiffLine> out;
    int i = 0;
    while (i < n) {
        while (i < n && all[i].kind == DiffLineKind::Context)
            ++i;
        if (i == n)
            break;
        // A hunk: from `context` lines before this change to `context` lines after the last
        // change that is at most 2*context unchanged lines from the one before it.
        const int first = std::max(0, i - context);
        int last = i;
        int quiet = 0;
        for (int j = i; j < n; ++j) {
            if (all[j].kind != DiffLineKind::Context) {
                last = j;
                quiet = 0;
            } else if (++quiet > 2 * context) {
                break;
            }
        }
        const int end = std::min(n, last + context + 1);
        int oldCount = 0, newCount = 0, oldStart = 0, newStart = 0;
        for (int j = first; j < end; ++j) {
            if (all[j].oldLine > 0 && oldStart == 0)
                oldStart = all[j].oldLine;
            if (all[j].newLine > 0 && newStart == 0)
                newStart = all[j].newLine;
            oldCount += all[j].kind != DiffLineKind::Added;
            newCount += all[j].kind != DiffLineKind::Removed;
        }
        // An empty side starts at the line before the change, as `diff -u` writes it.
        if (oldCount == 0)
            oldStart = first > 0 ? all[first - 1].oldLine : 0;
        if (newCount == 0)
            newStart = first > 0 ? all[first - 1].newLine : 0;
        DiffLine header;
        header.kind = DiffLineKind::Hunk;
        header.text = QStringLiteral("@@ -%1,%2 +%3,%4 @@")
                          .arg(oldStart)
                          .arg(oldCount)
                          .arg(newStart)
                          .arg(newCount);
        out.push_back(std::move(header));
        out.insert(out.end(), all.begin() + first, all.begin() + end);
        i = end;
    }
    return out;
}

DiffStats diffStats(const std::vector<DiffLine>& lines) {
    DiffStats stats;
    for (const DiffLine& line : lines) {
        stats.added += line.kind == DiffLineKind::Added;
        stats.removed += line.kind == DiffLineKind::Removed;
    }
    return stats;
}

} // namespace kwb::ui
