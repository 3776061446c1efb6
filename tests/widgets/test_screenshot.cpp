#include "agent/store/episode_export.h"
#include "agent/store/trajectory_store.h"
#include "engine/system/resource_paths.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>

class TestScreenshot : public QObject {
    Q_OBJECT
private slots:
    void writesAPngOfTheRequestedSizeWithTheTaskLoaded() {
        QTemporaryDir dir;
        const QString out = dir.filePath("shot.png");
        const QString task =
            QString::fromStdString(kwb::bundledTasksDirectory()) + "/03_softmax.py";
        QProcess app;
        app.start(KWB_GUI_EXECUTABLE, {"--screenshot", out, "--task", task, "--size", "1280x800"});
        QVERIFY(app.waitForFinished(180000));
        QCOMPARE(app.exitStatus(), QProcess::NormalExit);
        QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
        QVERIFY(app.readAllStandardOutput().contains("03_softmax.py"));
        QImage image(out);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), QSize(1280, 800));
        // A real rendering has many colours; a blank or failed grab has one or two.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
    }

    void defaultSizeAndMissingTaskIsAnError() {
        QTemporaryDir dir;
        QProcess app;
        app.start(KWB_GUI_EXECUTABLE, {"--screenshot", dir.filePath("a.png")});
        QVERIFY(app.waitForFinished(180000));
        QCOMPARE(app.exitCode(), 0);
        QCOMPARE(QImage(dir.filePath("a.png")).size(), QSize(1600, 1000));

        QProcess bad;
        bad.start(KWB_GUI_EXECUTABLE,
                  {"--screenshot", dir.filePath("b.png"), "--task", "/missing/task.py"});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 2);
        QVERIFY(bad.readAllStandardError().contains("not found"));
    }

    void viewBringsAPaneForwardAndEpisodeOpensAStoredOne() {
        QTemporaryDir dir;
        QVERIFY(QDir().mkpath(dir.filePath("state")));
        {
            auto store = kwb::agent::TrajectoryStore::open(
                dir.filePath("state/trajectories.db").toStdString());
            QVERIFY(store);
            kwb::agent::EpisodeRecord record;
            record.task = "01_gelu.py";
            record.model = "m";
            QVERIFY(store.value()->createEpisode(record));
        }
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("KWB_STATE_DIR", dir.filePath("state"));
        QProcess app;
        app.setProcessEnvironment(environment);
        app.start(KWB_GUI_EXECUTABLE, {"--screenshot", dir.filePath("r.png"), "--view", "rewards",
                                       "--episode", "1", "--size", "1280x800"});
        QVERIFY(app.waitForFinished(180000));
        QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
        const QByteArray printed = app.readAllStandardOutput();
        QVERIFY2(printed.contains("view rewards, episode 1 shown"), printed.constData());
        QCOMPARE(QImage(dir.filePath("r.png")).size(), QSize(1280, 800));

        QProcess bad;
        bad.start(KWB_GUI_EXECUTABLE, {"--screenshot", dir.filePath("b.png"), "--view", "nope"});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 2);
        QVERIFY(bad.readAllStandardError().contains("unknown view"));
    }

    // A FILE argument opens by what it holds: exported episodes are shown for replay (the
    // .desktop file's Exec passes files this way); a file of no known kind is a usage error.
    void aFileArgumentOpensByWhatItHolds() {
        QTemporaryDir dir;
        kwb::agent::EpisodeTrajectory trajectory;
        trajectory.episode.id = 17;
        trajectory.episode.task = "01_gelu.py";
        {
            std::ofstream out(dir.filePath("run.jsonl").toStdString());
            kwb::agent::writeExportLine(kwb::agent::toExportLine(trajectory), out);
        }
        QProcess app;
        app.start(KWB_GUI_EXECUTABLE,
                  {"--screenshot", dir.filePath("e.png"), dir.filePath("run.jsonl")});
        QVERIFY(app.waitForFinished(180000));
        QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
        const QByteArray printed = app.readAllStandardOutput();
        QVERIFY2(printed.contains("episode 17 shown"), printed.constData());

        QFile notes(dir.filePath("notes.txt"));
        QVERIFY(notes.open(QIODevice::WriteOnly));
        notes.write("timings\n");
        notes.close();
        QProcess bad;
        bad.start(KWB_GUI_EXECUTABLE, {"--screenshot", dir.filePath("b.png"), notes.fileName()});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 2);
        QVERIFY(bad.readAllStandardError().contains("notes.txt is not a task"));
    }

    // --file shows one file of the opened solution; a .cu file waits for its NVRTC compile, so
    // the assembly view in the picture lists its PTX. A file that is not open is a usage error.
    void fileShowsAKernelWithItsPtx() {
        QTemporaryDir dir;
        const QString task = QString::fromStdString(kwb::bundledTasksDirectory()) + "/01_gelu.py";
        QProcess app;
        app.start(KWB_GUI_EXECUTABLE, {"--screenshot", dir.filePath("p.png"), "--task", task,
                                       "--view", "assembly", "--file", "kernels/gelu.cu:20"});
        QVERIFY(app.waitForFinished(180000));
        QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
        const QByteArray printed = app.readAllStandardOutput();
        QVERIFY2(printed.contains("file kernels/gelu.cu with its PTX"), printed.constData());

        QProcess bad;
        bad.start(KWB_GUI_EXECUTABLE, {"--screenshot", dir.filePath("b.png"), "--task", task,
                                       "--file", "kernels/none.cu"});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 2);
        QVERIFY(bad.readAllStandardError().contains("no file kernels/none.cu"));
    }
};

QTEST_GUILESS_MAIN(TestScreenshot)
#include "test_screenshot.moc"
