// The reward plot's maths (ticks, ranges, data <-> pixel mapping, hit-testing), the rollout
// aggregates, and the widget: its points, hover text and the stepSelected click.
#include "episode_fixtures.h"
#include "widgets/models/reward_series.h"
#include "widgets/runs/plot_axes.h"
#include "widgets/runs/reward_plot.h"
#include "widgets/runs/rewards_pane.h"

#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>
#include <cmath>

using namespace kwb;
using namespace kwb::ui;
using namespace kwb::ui::test;

class TestRewardPlot : public QObject {
    Q_OBJECT
private slots:
    // On a short plot the aggregate view's long explanation printed over the plot's title.
    void theEmptyTextStaysBelowTheTitle() {
        RewardPlot plot;
        plot.setTitle(QStringLiteral("Reward per evaluation"));
        plot.setEmptyText(QStringLiteral("Select several episodes in the Runs browser and choose "
                                         "Aggregate to see them as a rollout."));
        for (const QSize size : {QSize(220, 120), QSize(480, 220)}) {
            plot.resize(size);
            const QRectF title = plot.titleArea();
            const QRectF empty = plot.emptyTextArea();
            QVERIFY(empty.top() >= title.bottom());
            QVERIFY(QRectF(plot.rect()).contains(empty));
            const QRect needed = plot.fontMetrics().boundingRect(
                empty.toRect(), Qt::AlignCenter | Qt::TextWordWrap,
                QStringLiteral("Select several episodes in the Runs browser and choose "
                               "Aggregate to see them as a rollout."));
            QVERIFY2(needed.top() >= title.bottom(),
                     qPrintable(QStringLiteral("%1x%2: text from %3, title to %4")
                                    .arg(size.width())
                                    .arg(size.height())
                                    .arg(needed.top())
                                    .arg(title.bottom())));
        }
    }

    void ticksAreRoundAndCoverTheRange() {
        QCOMPARE(niceTicks({-1, 3}, 5), (std::vector<double>{-1, 0, 1, 2, 3}));
        QCOMPARE(niceTicks({0, 100}, 6), (std::vector<double>{0, 20, 40, 60, 80, 100}));
        const auto fine = niceTicks({0.93, 1.07}, 5);
        QVERIFY(fine.size() >= 3 && fine.size() <= 5);
        for (double t : fine)
            QVERIFY(t >= 0.93 && t <= 1.07);
        QVERIFY(niceTicks({1, 1}, 5).empty());
    }

    void tickLabelsStayShort() {
        QCOMPARE(RewardPlot::tickText(0.25), QStringLiteral("0.25"));
        QCOMPARE(RewardPlot::tickText(5000), QStringLiteral("5000"));
        QCOMPARE(RewardPlot::tickText(20000), QStringLiteral("20k"));
        QCOMPARE(RewardPlot::tickText(15500), QStringLiteral("15.5k"));
        QCOMPARE(RewardPlot::tickText(-2.5e6), QStringLiteral("-2.5M"));
    }

    void aLongAxisLabelIsShortenedToFit() {
        const QFontMetrics metrics(QFont(QStringLiteral("DejaVu Sans"), 9));
        const QString label = QStringLiteral("loss, KL, entropy, clip");
        QCOMPARE(RewardPlot::fittedLabel(label, metrics, 1000), label);
        const QString fitted = RewardPlot::fittedLabel(label, metrics, 60);
        QVERIFY(fitted.endsWith(QChar(0x2026)));
        QVERIFY(metrics.horizontalAdvance(fitted) <= 60);
        QVERIFY(fitted.startsWith(QStringLiteral("loss")));
    }

    void fittedRangeHoldsValuesAndAnchors() {
        const AxisRange r = fittedRange({1.2, 2.5}, {1.0});
        QVERIFY(r.min < 1.0 && r.max > 2.5);
        const AxisRange single = fittedRange({2.0});
        QVERIFY(single.min < 2.0 && single.max > 2.0);
        const AxisRange none = fittedRange({});
        QCOMPARE(none.min, 0.0);
        QCOMPARE(none.max, 1.0);
    }

    void mapsDataToPixelsAndBack() {
        const PlotAxes axes(QRectF(50, 20, 400, 200), {0, 10}, {-1, 3});
        QCOMPARE(axes.toPixel({0, -1}), QPointF(50, 220));
        QCOMPARE(axes.toPixel({10, 3}), QPointF(450, 20));
        QCOMPARE(axes.toPixel({5, 1}), QPointF(250, 120));
        const QPointF back = axes.toValue(QPointF(130, 70));
        QVERIFY(std::abs(back.x() - 2.0) < 1e-9);
        QVERIFY(std::abs(back.y() - 2.0) < 1e-9);
    }

    void hitTestingPicksTheNearestPointWithinTheRadius() {
        const std::vector<QPointF> pixels = {{10, 10}, {20, 10}, {100, 100}};
        QCOMPARE(nearestPointIndex(pixels, {12, 11}, 8), 0);
        QCOMPARE(nearestPointIndex(pixels, {18, 10}, 8), 1);
        QCOMPARE(nearestPointIndex(pixels, {60, 60}, 8), -1);
        QCOMPARE(nearestPointIndex(pixels, {107, 100}, 8), 2);
        QCOMPARE(nearestPointIndex(pixels, {109, 100}, 8), -1);
        QCOMPARE(nearestPointIndex({}, {0, 0}, 8), -1);
    }

    void evaluationPointsComeFromEvaluationEvents() {
        const auto episode = episodeWith(7, {{-1, 0, 0}, {1, 1.5, 0.8}, {2, 2.0, 1.25}});
        const auto points = evaluationPoints(*episode);
        QCOMPARE(points.size(), std::size_t(3));
        QCOMPARE(points[1].index, 2);
        QCOMPARE(points[1].sequence, std::int64_t(4));
        QCOMPARE(points[1].episode, kwb::agent::EpisodeId(7));
        QCOMPARE(points[2].reward, 2.0);
        QCOMPARE(points[2].speedupVsCompile, 1.25);
        QCOMPARE(points[0].trigger, std::string("Verify"));
    }

    void rolloutAggregatesPerStepAndLevel() {
        const auto a = episodeWith(1, {{-1, 0, 0}, {2, 2.0, 1.5}}, "tasks/level1/a.py");
        const auto b =
            episodeWith(2, {{1, 0.5, 0.4}, {1, 1.0, 0.9}, {3, 8.0, 4.0}}, "tasks/level2/b.py");
        const RolloutMetrics m = rolloutMetrics({a, b});
        QCOMPARE(m.episodes, 2);
        QCOMPARE(m.perStep.size(), std::size_t(3));
        // Step 1: rewards -1 and 1; one pass (b), not faster than compile.
        QCOMPARE(m.perStep[0].meanReward, 0.0);
        QCOMPARE(m.perStep[0].passRate, 0.5);
        QCOMPARE(m.perStep[0].fasterThanCompileRate, 0.0);
        QVERIFY(std::abs(*m.perStep[0].geomeanSpeedupVsEager - 0.5) < 1e-12);
        // Step 2: both pass, a is faster than compile; geomean of 2.0 and 1.0.
        QCOMPARE(m.perStep[1].passRate, 1.0);
        QCOMPARE(m.perStep[1].fasterThanCompileRate, 0.5);
        QVERIFY(std::abs(*m.perStep[1].geomeanSpeedupVsEager - std::sqrt(2.0)) < 1e-12);
        QCOMPARE(m.perStep[2].evaluations, 1);
        // Per level: the last evaluation of each episode.
        QCOMPARE(m.perLevel.size(), std::size_t(2));
        QCOMPARE(m.perLevel[0].label, std::string("level 1"));
        QCOMPARE(m.perLevel[0].meanReward, 2.0);
        QCOMPARE(m.perLevel[1].label, std::string("level 2"));
        QCOMPARE(m.perLevel[1].meanReward, 3.0);
        // Nothing passed: no geomean rather than a made-up one.
        QVERIFY(!aggregate({evaluationPoints(*episodeWith(3, {{-1, 0, 0}}))[0]}, "x")
                     .geomeanSpeedupVsEager);
    }

    void taskLevelFromSettingsOrPath() {
        kwb::agent::EpisodeRecord r;
        r.task = "/data/KernelBench/level3/12_vgg.py";
        QCOMPARE(taskLevel(r), std::string("level 3"));
        r.settings["level"] = 2;
        QCOMPARE(taskLevel(r), std::string("level 2"));
        r.settings = nlohmann::json::object();
        r.task = "resources/tasks/01_gelu.py";
        QCOMPARE(taskLevel(r), std::string("unlabelled"));
    }

    void clickingAPointSelectsItsStepAndHoverShowsValues() {
        RewardsPane pane;
        pane.resize(900, 300);
        pane.show();
        QVERIFY(QTest::qWaitForWindowExposed(&pane));
        pane.showEpisode(episodeWith(5, {{-1, 0, 0}, {1, 1.5, 0.8}, {2, 2.0, 1.25}}));
        RewardPlot* plot = pane.rewardPlot();
        QCOMPARE(plot->pointCount(), 3);
        // Unmeasured speed-ups are left out, not drawn as zero.
        QCOMPARE(pane.speedupPlot()->pointCount(), 4);
        // A rejected candidate's timing is no speed-up: reward -1 with a measured 1.7x adds no
        // speed-up point, only its reward point.
        pane.showEpisode(episodeWith(6, {{-1, 1.7, 1.2}, {1, 1.5, 0.8}}));
        QCOMPARE(plot->pointCount(), 2);
        QCOMPARE(pane.speedupPlot()->pointCount(), 2);
        pane.showEpisode(episodeWith(5, {{-1, 0, 0}, {1, 1.5, 0.8}, {2, 2.0, 1.25}}));

        const QPointF second = plot->pixelOf(0, 1);
        QVERIFY(plot->rect().contains(second.toPoint()));
        QCOMPARE(plot->pointAt(second + QPointF(3, -2)),
                 (std::optional<std::pair<int, int>>({0, 1})));
        QVERIFY(!plot->pointAt(QPointF(2, 2)));
        const QString hover = plot->hoverTextAt(second);
        QVERIFY2(hover.contains(QLatin1String("reward 1")) &&
                     hover.contains(QLatin1String("1.50x")),
                 qPrintable(hover));
        QVERIFY(plot->hoverTextAt(QPointF(2, 2)).isEmpty());

        QSignalSpy selected(&pane, &RewardsPane::stepSelected);
        QTest::mouseClick(plot, Qt::LeftButton, {}, second.toPoint());
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected[0][0].toLongLong(), 5);
        QCOMPARE(selected[0][1].toLongLong(), 4); // the second evaluation is event 4
        QTest::mouseClick(plot, Qt::LeftButton, {}, QPoint(3, 3));
        QCOMPARE(selected.count(), 1);
    }

    void rolloutViewPlotsAggregatesWithoutEpisodeClicks() {
        RewardsPane pane;
        pane.resize(1200, 300);
        pane.show();
        QVERIFY(QTest::qWaitForWindowExposed(&pane));
        pane.showRollout({episodeWith(1, {{1, 1.2, 0.9}}), episodeWith(2, {{2, 2.0, 1.1}})});
        QCOMPARE(pane.meanRewardPlot()->pointCount(), 1);
        QCOMPARE(pane.ratesPlot()->pointCount(), 2);
        QCOMPARE(pane.geomeanPlot()->pointCount(), 1);
        QCOMPARE(pane.levelTable()->rowCount(), 1);
        QVERIFY(pane.headline().contains(QLatin1String("no rollout-run")));
        QSignalSpy selected(&pane, &RewardsPane::stepSelected);
        RewardPlot* mean = pane.meanRewardPlot();
        QTest::mouseClick(mean, Qt::LeftButton, {}, mean->pixelOf(0, 0).toPoint());
        QCOMPARE(selected.count(), 0); // an aggregate is not one episode's step
    }
};

QTEST_MAIN(TestRewardPlot)
#include "test_reward_plot.moc"
