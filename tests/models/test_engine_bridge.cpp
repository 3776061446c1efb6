#include "engine/system/resource_paths.h"
#include "engine/workspace/workspace.h"
#include "widgets/core/engine_bridge.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <fstream>

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

    void aTaskListIsNotHeldBehindARunningEvaluation() {
        // A candidate that sleeps in its forward: its evaluation runs for minutes unless stopped.
        QTemporaryDir dir;
        const std::string root = dir.path().toStdString();
        std::ofstream(root + "/task.py") << "import torch\nimport torch.nn as nn\n"
                                            "class Model(nn.Module):\n"
                                            "    def forward(self, x):\n        return x * 2\n"
                                            "def get_inputs():\n    return [torch.randn(8)]\n"
                                            "def get_init_inputs():\n    return []\n";
        const kwb::WorkspaceInitResult init = kwb::initWorkspace(root + "/task.py", root + "/ws");
        QVERIFY2(init.ok, init.error.c_str());
        std::ofstream(root + "/ws/model_new.py")
            << "import time\nimport torch\nimport torch.nn as nn\n"
               "class ModelNew(nn.Module):\n"
               "    def forward(self, x):\n        time.sleep(300)\n        return x * 2\n";
        EngineBridge bridge;
        QString stage;
        connect(&bridge, &EngineBridge::evaluationProgress, this,
                [&](quint64, const QString& s) { stage = s; });
        kwb::EvaluationOptions options;
        options.device = kwb::DeviceChoice::Cpu;
        bridge.requestEvaluation(QString::fromStdString(root + "/ws"), options);
        QTRY_VERIFY_WITH_TIMEOUT(stage == QStringLiteral("verify"), 120000);

        std::shared_ptr<const TaskListSnapshot> tasks;
        connect(&bridge, &EngineBridge::taskListReady, this, [&](auto s) { tasks = s; });
        QElapsedTimer waited;
        waited.start();
        bridge.requestTaskList(QString::fromStdString(kwb::bundledTasksDirectory()));
        QTRY_VERIFY_WITH_TIMEOUT(tasks != nullptr, 20000);
        QVERIFY(stage == QStringLiteral("verify")); // the evaluation still runs
        QVERIFY(waited.elapsed() < 20000);
        // Closing the bridge stops the evaluation in its stage (not after 300 s).
    }
};

QTEST_GUILESS_MAIN(TestEngineBridge)
#include "test_engine_bridge.moc"
