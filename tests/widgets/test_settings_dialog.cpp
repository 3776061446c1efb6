// The settings dialog: the Python probe's answer, however long, stays clear of the rows below
// it (it printed over the workspace root row), and a chosen interpreter is kept.
#include "widgets/core/app_settings.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/window/settings_dialog.h"

#include <QLabel>
#include <QLineEdit>
#include <QTemporaryDir>
#include <QTest>

using namespace kwb::ui;

class TestSettingsDialog : public QObject {
    Q_OBJECT
private slots:
    void aLongProbeAnswerPushesTheRowsBelowDown() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        // A path long enough that the answer wraps over several lines at the dialog's width.
        settings.setPythonInterpreter(
            dir.filePath("a/folder/that/does/not/exist/with/a/long/name/to/wrap/bin/python3"));
        EngineBridge bridge;
        SettingsDialog dialog(settings, bridge);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        QLabel* probe = nullptr;
        for (QLabel* label : dialog.findChildren<QLabel*>())
            if (label->wordWrap())
                probe = label;
        QVERIFY(probe);
        QTRY_VERIFY_WITH_TIMEOUT(!probe->text().startsWith("Probing"), 60000);
        QVERIFY2(probe->text().contains("not found") || probe->text().contains("Python"),
                 qPrintable(probe->text()));
        QTest::qWait(50);
        QLineEdit* root = nullptr;
        for (QLineEdit* edit : dialog.findChildren<QLineEdit*>())
            if (edit->text() == settings.workspaceRoot())
                root = edit;
        QVERIFY(root);
        const QRect probeRect(probe->mapTo(&dialog, QPoint(0, 0)), probe->size());
        const QRect rootRect(root->mapTo(&dialog, QPoint(0, 0)), root->size());
        // The label is as tall as its wrapped text needs, and the next row starts below it.
        QVERIFY2(probe->height() >= probe->heightForWidth(probe->width()),
                 qPrintable(QStringLiteral("%1 < %2")
                                .arg(probe->height())
                                .arg(probe->heightForWidth(probe->width()))));
        QVERIFY2(probeRect.bottom() < rootRect.top(),
                 qPrintable(QStringLiteral("probe ends at %1, the next row starts at %2")
                                .arg(probeRect.bottom())
                                .arg(rootRect.top())));
        QVERIFY(QRect(QPoint(0, 0), dialog.size()).contains(probeRect));
    }
};

QTEST_MAIN(TestSettingsDialog)
#include "test_settings_dialog.moc"
