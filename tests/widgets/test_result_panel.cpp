// The result panel: its flag/stage tree passes the model checker, it shows a verdict, reward,
// speed-ups with spread, flags coloured by severity, stage logs, the comparison with the
// previous evaluation, an empty state before any evaluation, and a no-GPU outcome as a fact
// about the machine rather than a failure of the candidate.
#include "engine/evaluation/evaluation_comparison.h"
#include "widgets/models/result_details_model.h"
#include "widgets/result/result_panel.h"

#include <QAbstractItemModelTester>
#include <QColor>
#include <QLabel>
#include <QTest>
#include <QTreeView>

using namespace kwb;
using namespace kwb::ui;

namespace {

std::shared_ptr<const kwb::EvaluationResult> passing(double vsEager, double vsCompile,
                                                     std::vector<kwb::IntegrityFlag> flags = {}) {
    auto r = std::make_shared<kwb::EvaluationResult>();
    r->compiled = true;
    r->correct = true;
    r->checksRun = r->checksPassed = 3;
    r->speedupVsEager = vsEager;
    r->speedupVsCompile = vsCompile;
    r->reward = vsCompile > 1.05 ? 3 : 1;
    r->rewardReason = "milestone";
    r->candidate.available = true;
    r->candidate.medianMs = 0.5;
    r->candidate.stdevMs = 0.02;
    r->candidate.samples = 30;
    r->candidate.method = "wall-clock";
    r->candidate.cv = 0.04;
    r->candidate.roundCv = 0.01;
    r->candidate.rounds = 4;
    r->candidate.stable = true;
    r->eager = r->candidate;
    r->eager.medianMs = 0.5 * vsEager;
    r->compiledBaseline = r->candidate;
    r->compiledBaseline.medianMs = 0.5 * vsCompile;
    r->stages = {{"workspace", kwb::StageStatus::Passed, 0.01, "protected files intact", ""},
                 {"compile", kwb::StageStatus::Passed, 12.5, "built cuda_extension",
                  "ninja: building\n[1/2] c++ gelu.cpp\n[2/2] link"},
                 {"verify", kwb::StageStatus::Passed, 3.0, "3/3 checks", ""}};
    r->flags = std::move(flags);
    return r;
}

} // namespace

class TestResultPanel : public QObject {
    Q_OBJECT
private slots:
    void detailsModelPassesTheModelChecker() {
        ResultDetailsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.rowCount(model.groupIndex(ResultDetailsModel::Flags)), 0);
        model.setResult(passing(1.4, 1.1,
                                {{"sandbox_weak", kwb::FlagSeverity::Warning, "no bubblewrap"},
                                 {"torch_fallback", kwb::FlagSeverity::Strict,
                                  "aten::gelu ran in PyTorch\nsecond line"}}));
        const QModelIndex flags = model.groupIndex(ResultDetailsModel::Flags);
        const QModelIndex stages = model.groupIndex(ResultDetailsModel::Stages);
        QCOMPARE(model.rowCount(flags), 2);
        QCOMPARE(model.rowCount(stages), 3);
        QCOMPARE(flags.data().toString(), QStringLiteral("Integrity flags (2)"));
        const QModelIndex strict = model.index(1, ResultDetailsModel::Status, flags);
        QCOMPARE(strict.data().toString(), QStringLiteral("strict"));
        QCOMPARE(strict.data(Qt::ForegroundRole).value<QColor>(),
                 severityColor(kwb::FlagSeverity::Strict));
        QVERIFY(severityColor(kwb::FlagSeverity::Strict) !=
                severityColor(kwb::FlagSeverity::Warning));
        QCOMPARE(model.index(1, ResultDetailsModel::Detail, flags).data().toString(),
                 QStringLiteral("aten::gelu ran in PyTorch …"));
        // Only the stage with a log has a child row, and it carries the whole log.
        const QModelIndex compile = model.index(1, 0, stages);
        QCOMPARE(model.rowCount(model.index(0, 0, stages)), 0);
        QCOMPARE(model.rowCount(compile), 1);
        QCOMPARE(model.parent(model.index(0, 0, compile)), compile);
        QVERIFY(model.index(0, 0, compile)
                    .data(ResultDetailsModel::FullTextRole)
                    .toString()
                    .contains("[2/2] link"));
        QCOMPARE(model.index(1, ResultDetailsModel::Duration, stages).data().toString(),
                 QStringLiteral("12.50 s"));
        model.setResult(nullptr);
        QCOMPARE(model.rowCount(flags), 0);
    }

    void showsAnEmptyStateBeforeTheFirstEvaluation() {
        ResultPanel panel;
        QVERIFY(panel.showsEmptyState());
        QVERIFY(panel.verdictText().isEmpty());
        panel.showRunning("compile");
        QVERIFY(!panel.showsEmptyState());
        QVERIFY(panel.runningText().contains("compile"));
        panel.showRunning({});
        QVERIFY(panel.runningText().isEmpty());
    }

    void showsVerdictRewardSpreadAndComparison() {
        ResultPanel panel;
        panel.showLiveEvaluation(passing(1.30, 0.95), "first");
        QCOMPARE(panel.verdictText(),
                 QStringLiteral("correct, 1.30x vs eager, 0.95x vs torch.compile"));
        QVERIFY(panel.rewardText().startsWith("1 "));
        QVERIFY(panel.speedupText().contains("1.30×"));
        const QColor faster = panel.verdictColor();
        QVERIFY(panel.comparisonText().contains("no earlier evaluation"));
        QVERIFY(panel.baselineText().contains("eager 0.6500 ms"));
        QVERIFY(panel.baselineText().contains("4 round(s)"));

        panel.showLiveEvaluation(
            passing(1.60, 1.20, {{"sandbox_weak", kwb::FlagSeverity::Warning, "no bwrap"}}),
            "second");
        QCOMPARE(panel.titleText(), QStringLiteral("second"));
        QVERIFY(panel.rewardText().startsWith("3 "));
        const QString comparison = panel.comparisonText();
        QVERIFY2(comparison.contains("reward +2"), qPrintable(comparison));
        QVERIFY2(comparison.contains("vs eager +0.30×"), qPrintable(comparison));
        QVERIFY2(comparison.contains("vs torch.compile +0.25×"), qPrintable(comparison));
        QVERIFY2(comparison.contains("flag added: sandbox_weak"), qPrintable(comparison));

        panel.showLiveEvaluation(passing(1.60, 1.20), "third");
        QVERIFY(panel.comparisonText().contains("flag removed: sandbox_weak"));
        QVERIFY(panel.comparisonText().contains("reward unchanged"));

        // Correct but slower than eager is not painted like a success.
        panel.showLiveEvaluation(passing(0.16, 0.10), "slower");
        QVERIFY(panel.verdictText().startsWith("correct, 0.16x"));
        QVERIFY(panel.verdictColor() != faster);
        panel.showLiveEvaluation(passing(1.30, 0.95), "faster again");
        QCOMPARE(panel.verdictColor(), faster);
    }

    void selectingAStageShowsItsLog() {
        ResultPanel panel;
        panel.showEvaluation(passing(1.2, 1.0), nullptr, "x");
        auto* model = panel.detailsModel();
        const QModelIndex compile =
            model->index(1, 0, model->groupIndex(ResultDetailsModel::Stages));
        panel.detailsView()->setCurrentIndex(compile);
        QVERIFY(panel.logText().contains("[1/2] c++ gelu.cpp"));
    }

    void aNoGpuOutcomeIsExplainedNotShownAsACrash() {
        auto r = std::make_shared<kwb::EvaluationResult>();
        r->compiled = true;
        r->failureKind = "no_gpu";
        r->failureMessage = "fast-path kernels (kwb_kernels) run only on a CUDA GPU";
        r->rewardReason = "not verified";
        ResultPanel panel;
        panel.showEvaluation(r, nullptr, "fast path");
        QVERIFY(panel.verdictText().startsWith("no_gpu: "));
        QVERIFY(panel.speedupText().contains("—"));
        QVERIFY(panel.findChildren<QLabel*>().size() > 0);
        bool explained = false;
        for (QLabel* label : panel.findChildren<QLabel*>())
            explained |= label->isVisibleTo(&panel) && label->text().contains("No CUDA GPU");
        QVERIFY(explained);
    }

    void comparisonIgnoresUnmeasuredSpeedups() {
        auto failed = std::make_shared<kwb::EvaluationResult>();
        failed->failureKind = "compile_error";
        const EvaluationComparison c = compareEvaluations(*failed, *passing(1.5, 1.1));
        QCOMPARE(c.rewardDelta, 4); // -1 -> 3
        QVERIFY(!c.speedupVsEagerDelta.has_value());
        QVERIFY(c.flagsAdded.empty() && c.flagsRemoved.empty());
    }
};

QTEST_MAIN(TestResultPanel)
#include "test_result_panel.moc"
