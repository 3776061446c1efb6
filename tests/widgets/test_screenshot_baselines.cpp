// Screenshot baselines: a few panes rendered offscreen with fixed content, in both themes, and
// compared with the images checked in under tests/data/screenshots. The comparison tolerates
// anti-aliasing and font hinting noise (a pixel counts as changed when a channel moves by more
// than 48, and up to 0.5% of pixels may change); a layout, colour or painting change fails.
//
// The fonts are pinned (workbench_fonts.h), and ctest runs this under a fontconfig file whose
// "monospace" is DejaVu Serif (tests/data/fonts): the images must not follow a desktop's default
// fonts.
//
// After an intended visual change, regenerate with KWB_UPDATE_SCREENSHOTS=1 and look at the
// images before committing them.
#include "tests/timeline/timeline_fixture.h"
#include "widgets/core/workbench_fonts.h"
#include "widgets/diff/diff_view.h"
#include "widgets/editors/code_editor.h"
#include "widgets/runs/reward_plot.h"
#include "widgets/timeline/timeline_view.h"
#include "engine/system/resource_paths.h"
#include "widgets/agent/rollout_panes.h"
#include "widgets/core/app_settings.h"
#include "widgets/window/main_window.h"
#include "widgets/window/task_browser.h"
#include "widgets/window/theme.h"

#include <QApplication>
#include <QDir>
#include <QFontDatabase>
#include <QFontInfo>
#include <QImage>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <Qsci/qscilexer.h>
#include <cstdlib>

using namespace kwb;
using namespace kwb::ui;

namespace {

const QString kBaselines = QStringLiteral(KWB_SCREENSHOT_BASELINES);

QImage renderOf(QWidget& widget, QSize size) {
    widget.resize(size);
    widget.ensurePolished();
    QImage image(size, QImage::Format_RGB32);
    widget.render(&image);
    return image;
}

struct Difference {
    double changedFraction = 1.0;
    QString problem;
};

Difference compare(const QImage& actual, const QImage& expected) {
    if (expected.isNull())
        return {1.0, QStringLiteral("no baseline")};
    if (actual.size() != expected.size())
        return {1.0, QStringLiteral("size %1x%2, baseline %3x%4")
                         .arg(actual.width())
                         .arg(actual.height())
                         .arg(expected.width())
                         .arg(expected.height())};
    const QImage a = actual.convertToFormat(QImage::Format_RGB32);
    const QImage b = expected.convertToFormat(QImage::Format_RGB32);
    qint64 changed = 0;
    for (int y = 0; y < a.height(); ++y) {
        const auto* ra = reinterpret_cast<const QRgb*>(a.constScanLine(y));
        const auto* rb = reinterpret_cast<const QRgb*>(b.constScanLine(y));
        for (int x = 0; x < a.width(); ++x) {
            const int d = std::max({std::abs(qRed(ra[x]) - qRed(rb[x])),
                                    std::abs(qGreen(ra[x]) - qGreen(rb[x])),
                                    std::abs(qBlue(ra[x]) - qBlue(rb[x]))});
            changed += d > 48;
        }
    }
    return {static_cast<double>(changed) / (static_cast<double>(a.width()) * a.height()), {}};
}

// Compares with the baseline `name`.png, or writes it when KWB_UPDATE_SCREENSHOTS=1. A failing
// image is saved next to the test binary for a look.
void expectMatchesBaseline(const QImage& image, const QString& name) {
    const QString path = kBaselines + QLatin1Char('/') + name + QStringLiteral(".png");
    if (qEnvironmentVariableIntValue("KWB_UPDATE_SCREENSHOTS") == 1) {
        QDir().mkpath(kBaselines);
        QVERIFY(image.save(path));
        return;
    }
    const Difference d = compare(image, QImage(path));
    const QString actualPath = QDir::current().filePath(name + QStringLiteral("-actual.png"));
    if (!d.problem.isEmpty() || d.changedFraction > 0.005)
        image.save(actualPath);
    QVERIFY2(d.problem.isEmpty(),
             qPrintable(name + ": " + d.problem + " (" + path + "); rendered: " + actualPath));
    QVERIFY2(d.changedFraction <= 0.005,
             qPrintable(QStringLiteral("%1: %2% of pixels differ from %3; rendered: %4")
                            .arg(name)
                            .arg(100 * d.changedFraction, 0, 'f', 2)
                            .arg(path, actualPath)));
}

std::vector<PlotSeries> rewardSeries() {
    PlotSeries reward{QStringLiteral("reward"), QColor("#589df6"), {}};
    PlotSeries speedup{QStringLiteral("speed-up vs compile"), QColor("#e0a030"), {}};
    const double rewards[] = {-1, 1, 1, 2, 3, 3};
    const double speedups[] = {0.6, 0.9, 1.02, 1.08, 1.35, 1.41};
    for (int i = 0; i < 6; ++i) {
        reward.points.push_back({static_cast<double>(i + 1), rewards[i], 1, i + 1, {}});
        speedup.points.push_back({static_cast<double>(i + 1), speedups[i], 1, i + 1, {}});
    }
    return {reward, speedup};
}

} // namespace

class TestScreenshotBaselines : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY2(pinnedFontsInstalled(),
                 "DejaVu Sans and DejaVu Sans Mono are missing: install fonts-dejavu-core "
                 "(tools/setup.sh does)");
        pinInterfaceFont();
    }

    void codeAndTextUseThePinnedFontsWhateverTheDesktopPrefers() {
        QCOMPARE(QFontInfo(codeFont()).family(), QStringLiteral("DejaVu Sans Mono"));
        QCOMPARE(QFontInfo(QGuiApplication::font()).family(), QStringLiteral("DejaVu Sans"));
        CodeEditor editor(SourceLanguage::Cuda, Theme::Dark);
        QCOMPARE(QFontInfo(editor.lexer()->defaultFont()).family(),
                 QStringLiteral("DejaVu Sans Mono"));
        // Under ctest the desktop's monospace font is another one, so the pin is what holds.
        if (qEnvironmentVariable("FONTCONFIG_FILE").endsWith("other-default-fonts.conf"))
            QVERIFY(QFontInfo(QFontDatabase::systemFont(QFontDatabase::FixedFont)).family() !=
                    QStringLiteral("DejaVu Sans Mono"));
    }

    void codeEditorDark() {
        applyApplicationTheme(Theme::Dark);
        CodeEditor editor(SourceLanguage::Cuda, Theme::Dark);
        editor.setSource(
            QStringLiteral("// y = gelu(x), four elements per thread\n"
                           "__global__ void gelu4(const float4* x, float4* y, int n4) {\n"
                           "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "    if (i >= n4) return;\n"
                           "    float4 v = x[i];\n"
                           "    y[i] = make_float4(gelu(v.x), gelu(v.y), gelu(v.z), gelu(v.w));\n"
                           "}\n"));
        expectMatchesBaseline(renderOf(editor, {640, 180}), QStringLiteral("code-editor-dark"));
    }

    // The whole window on a 1366x768 laptop and a 1600x1000 desktop (less a title bar), in both
    // themes, with a bundled task open. The status bar (what this machine has) and the task
    // folder's path differ between machines and are left out.
    void mainWindowAtBothSizesInBothThemes() {
        for (const QSize size : {QSize(1366, 728), QSize(1600, 960)}) {
            for (const Theme theme : {Theme::Dark, Theme::Light}) {
                QTemporaryDir dir;
                qputenv("KWB_STATE_DIR", dir.filePath("state").toUtf8());
                AppSettings settings(dir.filePath("s.ini"));
                settings.setTheme(theme);
                applyApplicationTheme(theme);
                MainWindow window(settings);
                window.resize(size);
                window.show();
                QVERIFY(QTest::qWaitForWindowExposed(&window));
                QVERIFY(window.openTask(QString::fromStdString(kwb::bundledTasksDirectory()) +
                                        "/05_gemm_bias_relu.py"));
                QTRY_VERIFY_WITH_TIMEOUT(window.hasSystemReport() && window.hasTaskList() &&
                                             window.rolloutPanes()->hasShownRuns(),
                                         120000);
                window.statusBar()->hide();
                window.findChild<TaskBrowser*>()->setStatusText(QStringLiteral("8 task(s)"));
                QTest::qWait(50);
                QCOMPARE(window.size(), size);
                const QString name = QStringLiteral("window-%1x%2-%3")
                                         .arg(size.width())
                                         .arg(size.height())
                                         .arg(theme == Theme::Dark ? "dark" : "light");
                expectMatchesBaseline(renderOf(window, size), name);
            }
        }
    }

    void timelineDark() {
        applyApplicationTheme(Theme::Dark);
        TimelineView view;
        kwb::testing::SyntheticSpec spec;
        spec.kernels = 600;
        spec.sideStreams = 2;
        spec.iterationsPerPhase = 6;
        view.setTimeline(kwb::testing::makeSyntheticTimeline(spec));
        expectMatchesBaseline(renderOf(view, {960, 300}), QStringLiteral("timeline-dark"));
    }

    void rewardPlotInBothThemes() {
        for (const Theme theme : {Theme::Dark, Theme::Light}) {
            applyApplicationTheme(theme);
            RewardPlot plot;
            plot.setTitle(QStringLiteral("Episode 1: reward and speed-up per evaluation"));
            plot.setAxisLabels(QStringLiteral("evaluation step"), QStringLiteral("value"));
            plot.setMinimumYRange(AxisRange{-1, 3});
            plot.setReferenceLine(1.0);
            plot.setSeries(rewardSeries());
            expectMatchesBaseline(renderOf(plot, {640, 280}),
                                  theme == Theme::Dark ? QStringLiteral("reward-plot-dark")
                                                       : QStringLiteral("reward-plot-light"));
        }
    }

    void diffViewLight() {
        applyApplicationTheme(Theme::Light);
        DiffView view;
        view.showDiff(QStringLiteral("Episode 8: step 4 -> step 7"),
                      QStringLiteral("=== kernels/gelu.cu\nconst float k = 0.044715f;\n"
                                     "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                     "if (i < n) y[i] = gelu(x[i]);\n"),
                      QStringLiteral("=== kernels/gelu.cu\nconst float k = 0.044715f;\n"
                                     "int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;\n"
                                     "if (i + 3 < n) store4(y + i, gelu4(load4(x + i)));\n"));
        expectMatchesBaseline(renderOf(view, {720, 240}), QStringLiteral("diff-view-light"));
    }
};

QTEST_MAIN(TestScreenshotBaselines)
#include "test_screenshot_baselines.moc"
