#include "widgets/diff/diff_view.h"
#include "widgets/models/diff_model.h"
#include "widgets/models/line_diff.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDialog>
#include <QTest>

using namespace kwb;
using namespace kwb::ui;

namespace {

QString kinds(const std::vector<DiffLine>& lines) {
    QString out;
    for (const DiffLine& line : lines)
        out += line.kind == DiffLineKind::Context   ? u' '
               : line.kind == DiffLineKind::Added   ? u'+'
               : line.kind == DiffLineKind::Removed ? u'-'
                                                    : u'@';
    return out;
}

QString numberedLines(int count, int changedAt = -1) {
    QString text;
    for (int i = 1; i <= count; ++i)
        text +=
            (i == changedAt ? QStringLiteral("changed %1\n") : QStringLiteral("line %1\n")).arg(i);
    return text;
}

} // namespace

class TestLineDiff : public QObject {
    Q_OBJECT
private slots:
    void equalTextsHaveOnlyContext() {
        const auto lines = diffLines("a\nb\nc\n", "a\nb\nc\n");
        QCOMPARE(kinds(lines), QStringLiteral("   "));
        QCOMPARE(lines[2].oldLine, 3);
        QCOMPARE(lines[2].newLine, 3);
        QVERIFY(unifiedDiff("a\nb\n", "a\nb\n").empty());
    }

    void replacementListsRemovedBeforeAdded() {
        const auto lines = diffLines("a\nb\nc\n", "a\nB\nc\nd\n");
        QCOMPARE(kinds(lines), QStringLiteral(" -+ +"));
        QCOMPARE(lines[1], (DiffLine{DiffLineKind::Removed, 2, 0, "b"}));
        QCOMPARE(lines[2], (DiffLine{DiffLineKind::Added, 0, 2, "B"}));
        QCOMPARE(lines[4], (DiffLine{DiffLineKind::Added, 0, 4, "d"}));
        const DiffStats stats = diffStats(lines);
        QCOMPARE(stats.added, 2);
        QCOMPARE(stats.removed, 1);
    }

    void insertionIntoEmptyAndDeletionToEmpty() {
        QCOMPARE(kinds(diffLines("", "x\ny\n")), QStringLiteral("++"));
        QCOMPARE(kinds(diffLines("x\ny\n", "")), QStringLiteral("--"));
        // A missing final newline is not a changed line.
        QCOMPARE(kinds(diffLines("x\ny", "x\ny\n")), QStringLiteral("  "));
        QCOMPARE(kinds(diffLines("x\r\ny\r\n", "x\ny\n")), QStringLiteral("  "));
    }

    void unifiedHunksKeepThreeLinesOfContext() {
        const auto hunks = unifiedDiff(numberedLines(20), numberedLines(20, 10));
        QCOMPARE(kinds(hunks), QStringLiteral("@   -+   "));
        QCOMPARE(hunks[0].text, QStringLiteral("@@ -7,7 +7,7 @@"));
        QCOMPARE(hunks[1].oldLine, 7);
        QCOMPARE(hunks[4].text, QStringLiteral("line 10"));
        QCOMPARE(hunks[5].text, QStringLiteral("changed 10"));
    }

    void distantChangesMakeTwoHunksAndNearOnesOne() {
        QString after = numberedLines(30);
        after.replace("line 2\n", "two\n").replace("line 25\n", "twenty-five\n");
        const auto apart = unifiedDiff(numberedLines(30), after);
        QCOMPARE(std::count_if(apart.begin(), apart.end(),
                               [](const DiffLine& l) { return l.kind == DiffLineKind::Hunk; }),
                 2);
        QCOMPARE(apart[0].text, QStringLiteral("@@ -1,5 +1,5 @@"));
        QString near = numberedLines(30);
        near.replace("line 10\n", "ten\n").replace("line 15\n", "fifteen\n");
        const auto together = unifiedDiff(numberedLines(30), near);
        QCOMPARE(std::count_if(together.begin(), together.end(),
                               [](const DiffLine& l) { return l.kind == DiffLineKind::Hunk; }),
                 1);
        QCOMPARE(together[0].text, QStringLiteral("@@ -7,12 +7,12 @@"));
    }

    void modelPassesTheTesterAndColoursChanges() {
        DiffModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTexts("a\nb\nc\n", "a\nB\nc\n");
        QCOMPARE(model.rowCount(), 5); // hunk header, a, -b, +B, c
        QCOMPARE(model.index(0, DiffModel::TextColumn).data().toString(),
                 QStringLiteral("@@ -1,3 +1,3 @@"));
        QCOMPARE(model.index(1, DiffModel::TextColumn).data().toString(), QStringLiteral(" a"));
        QCOMPARE(model.index(2, DiffModel::TextColumn).data().toString(), QStringLiteral("-b"));
        QCOMPARE(model.index(2, DiffModel::OldLineColumn).data().toString(), QStringLiteral("2"));
        QCOMPARE(model.index(2, DiffModel::NewLineColumn).data().toString(), QString());
        const QColor removed =
            model.index(2, DiffModel::TextColumn).data(Qt::BackgroundRole).value<QBrush>().color();
        const QColor added =
            model.index(3, DiffModel::TextColumn).data(Qt::BackgroundRole).value<QBrush>().color();
        QVERIFY(removed.red() > removed.green());
        QVERIFY(added.green() > added.red());
        QVERIFY(!model.index(1, DiffModel::TextColumn).data(Qt::BackgroundRole).isValid());
        model.setTexts("a\nb\nc\n", "a\nB\nc\n", -1);
        QCOMPARE(model.rowCount(), 4);
        model.setTexts({}, {});
        QCOMPARE(model.rowCount(), 0);
    }

    void viewShowsTitleAndCounts() {
        DiffView view;
        view.showDiff("kernels/a.cu: step 3 → step 5", "x\ny\n", "x\nz\nw\n");
        QCOMPARE(view.titleText(), QStringLiteral("kernels/a.cu: step 3 → step 5"));
        QVERIFY(view.summaryText().contains("+2"));
        QVERIFY(view.summaryText().contains("−1"));
        QDialog* dialog = showDiffDialog(nullptr, "t", "a\n", "a\n");
        QVERIFY(dialog->findChild<DiffView*>()->summaryText().contains("No differences"));
        delete dialog;
    }
};

QTEST_MAIN(TestLineDiff)
#include "test_line_diff.moc"
