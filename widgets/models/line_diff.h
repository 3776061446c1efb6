#pragma once

#include <QString>
#include <vector>

namespace kwb::ui {

enum class DiffLineKind { Context, Removed, Added, Hunk };

// One row of a line diff. Line numbers are 1-based, 0 where the row has no line on that side
// (an added line has no old line; a hunk header has neither).
struct DiffLine {
    DiffLineKind kind = DiffLineKind::Context;
    int oldLine = 0;
    int newLine = 0;
    QString text;

    bool operator==(const DiffLine&) const = default;
};

struct DiffStats {
    int added = 0;
    int removed = 0;
};

// Every line of both texts, in order: unchanged lines once, removed lines before the lines that
// replace them. A final newline does not make an extra empty line.
std::vector<DiffLine> diffLines(const QString& before, const QString& after);

// Unified form: only the changes with `context` unchanged lines around them, each group under a
// hunk header "@@ -12,7 +12,8 @@". Empty when the texts are equal.
std::vector<DiffLine> unifiedDiff(const QString& before, const QString& after, int context = 3);

DiffStats diffStats(const std::vector<DiffLine>& lines);

} // namespace kwb::ui
