#include "widgets/core/app_settings.h"

#include <QTemporaryDir>
#include <QTest>

using namespace kwb;
using namespace kwb::ui;

class TestAppSettings : public QObject {
    Q_OBJECT
private slots:
    void defaults() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        QVERIFY(settings.pythonInterpreter().isEmpty()); // empty = auto-detect
        QCOMPARE(settings.theme(), Theme::Dark);
        QVERIFY(settings.workspaceRoot().endsWith("workspaces"));
        QVERIFY(settings.lastTaskPath().isEmpty());
    }

    void roundTripThroughTheFile() {
        QTemporaryDir dir;
        const QString file = dir.filePath("s.ini");
        {
            AppSettings settings(file);
            settings.setPythonInterpreter("/opt/venv/bin/python3");
            settings.setWorkspaceRoot("/data/ws");
            settings.setTheme(Theme::Light);
            settings.setLastTaskPath("/tasks/t.py");
            settings.setWindowLayout(QByteArray("geom"), QByteArray("state"));
            settings.sync();
        }
        AppSettings reread(file);
        QCOMPARE(reread.pythonInterpreter(), QString("/opt/venv/bin/python3"));
        QCOMPARE(reread.workspaceRoot(), QString("/data/ws"));
        QCOMPARE(reread.theme(), Theme::Light);
        QCOMPARE(reread.lastTaskPath(), QString("/tasks/t.py"));
        QCOMPARE(reread.windowGeometry(), QByteArray("geom"));
        QCOMPARE(reread.windowState(), QByteArray("state"));
    }

    void themeNames() {
        QCOMPARE(themeFromName(themeName(Theme::Light)), Theme::Light);
        QCOMPARE(themeFromName(themeName(Theme::Dark)), Theme::Dark);
        QCOMPARE(themeFromName("LIGHT"), Theme::Light);
        QCOMPARE(themeFromName("garbage"), Theme::Dark);
    }
};

QTEST_GUILESS_MAIN(TestAppSettings)
#include "test_app_settings.moc"
