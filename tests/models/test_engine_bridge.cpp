#include "engine/system/resource_paths.h"
#include "widgets/core/engine_bridge.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>

using namespace kwb;
using namespace kwb::ui;

class TestEngineBridge : public QObject {
    Q_OBJECT
private slots:
    void deliversSnapshotsOnTheUiThread() {
        EngineBridge bridge;
        QThread* uiThread = QThread::currentThread();
        bool onUiThread = false;
        std::shared_ptr<const TaskListSnapshot> received;
        connect(&bridge, &EngineBridge::taskListReady, this, [&](auto snapshot) {
            onUiThread = QThread::currentThread() == uiThread;
            received = snapshot;
        });
        bridge.requestTaskList(QString::fromStdString(kwb::bundledTasksDirectory()));
        QTRY_VERIFY_WITH_TIMEOUT(received != nullptr, 10000);
        QVERIFY(onUiThread);
        QVERIFY(received->tasks.size() >= 8);
        QVERIFY(!bridge.isBusy());
    }

    void onlyTheLatestRequestPerTagIsDelivered() {
        EngineBridge bridge;
        QStringList delivered;
        connect(&bridge, &EngineBridge::taskListReady, this,
                [&](auto snapshot) { delivered << snapshot->directory; });
        QSignalSpy busy(&bridge, &EngineBridge::busyChanged);
        for (int i = 0; i < 10; ++i)
            bridge.requestTaskList(QStringLiteral("/nonexistent/%1").arg(i));
        bridge.requestTaskList(QString::fromStdString(kwb::bundledTasksDirectory()));
        QTRY_VERIFY_WITH_TIMEOUT(!bridge.isBusy(), 10000);
        QTest::qWait(100); // stale results still in flight would arrive now
        QCOMPARE(delivered.size(), 1);
        QCOMPARE(delivered.front(), QString::fromStdString(kwb::bundledTasksDirectory()));
        QVERIFY(busy.count() >= 2); // went busy, came back idle
        QCOMPARE(busy.last().first().toBool(), false);
    }

    void probesAnInterpreterWithoutBlockingTheUi() {
        EngineBridge bridge;
        std::shared_ptr<const kwb::PythonProbe> probe;
        connect(&bridge, &EngineBridge::pythonProbeReady, this, [&](auto p) { probe = p; });
        bridge.requestPythonProbe("/bogus/python");
        QVERIFY(probe == nullptr); // the request returned before the probe ran
        QTRY_VERIFY_WITH_TIMEOUT(probe != nullptr, 10000);
        QVERIFY(!probe->usable());
        QVERIFY(QString::fromStdString(probe->error).contains("not found"));
    }
};

QTEST_GUILESS_MAIN(TestEngineBridge)
#include "test_engine_bridge.moc"
