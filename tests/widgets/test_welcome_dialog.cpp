// The welcome page: what the machine has and what each missing piece turns off, a bundled task
// opened with one click, and a model for agents tried against a scripted LLM server before it
// is kept (and then what the Agent tab starts with, also after a restart).
#include "engine/system/resource_paths.h"
#include "engine/workspace/task_catalog.h"
#include "tests/agent/scripted_llm_server.h"
#include "widgets/agent/agent_pane.h"
#include "widgets/agent/agent_panes.h"
#include "widgets/core/app_settings.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/models/task_list_model.h"
#include "widgets/window/main_window.h"
#include "widgets/window/welcome_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace kwb::ui;
using kwb::agent::test_support::ScriptedLlmServer;
using nlohmann::json;

namespace {

std::shared_ptr<const kwb::SystemReport> bareMachine() {
    auto report = std::make_shared<kwb::SystemReport>();
    report->gpus.status = "No GPU: NVIDIA driver not found";
    report->cudaToolkitVersion = "13.0.88";
    report->nvrtcVersion = "not found";
    report->python.error = "python3: not found";
    return report;
}

std::shared_ptr<const kwb::SystemReport> completeMachine() {
    auto report = std::make_shared<kwb::SystemReport>(*bareMachine());
    report->gpus.driverLoaded = true;
    report->gpus.devices.push_back({});
    report->gpus.devices.back().name = "NVIDIA H200";
    report->nvrtcLoaded = true;
    report->python.runs = report->python.hasTorch = report->python.hasTorchCompile = true;
    report->bubblewrap = "/usr/bin/bwrap";
    report->bubblewrapWorks = true;
    report->ninja = "/venv/bin/ninja";
    return report;
}

} // namespace

class TestWelcomeDialog : public QObject {
    Q_OBJECT
private slots:
    void theMachineSectionSaysWhatIsMissingWhatItTurnsOffAndHowToGetIt() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        EngineBridge bridge;
        TaskListModel tasks;
        WelcomeDialog welcome(settings, bridge, &tasks);
        welcome.showReport(bareMachine());
        QCOMPARE(welcome.readiness().size(), std::size_t(6));
        const QString text = welcome.machineText();
        QVERIFY2(text.contains("Missing here: 6 of 6"), qPrintable(text));
        QCOMPARE(text.count("Without it:"), 6);
        QCOMPARE(text.count("To get it:"), 6);
        QVERIFY(text.contains("pip install ninja"));
        QVERIFY(text.contains("tools/setup.sh"));
        QVERIFY(text.contains("apt install bubblewrap"));

        // Everything there: one line each, nothing to install.
        welcome.showReport(completeMachine());
        const QString complete = welcome.machineText();
        QVERIFY2(complete.contains("Everything the workbench uses is here"), qPrintable(complete));
        QVERIFY(!complete.contains("Without it:"));
        QVERIFY(complete.contains("NVIDIA H200"));
    }

    void aBundledTaskOpensWithOneClick() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        QTRY_VERIFY_WITH_TIMEOUT(window.hasTaskList(), 60000);
        window.showWelcome();
        WelcomeDialog* welcome = window.welcomeDialog();
        QVERIFY(welcome && welcome->isVisible());
        // The first task with a reference solution is chosen already.
        const QString chosen = welcome->taskChoice()->currentData().toString();
        QVERIFY2(chosen.endsWith("01_gelu.py"), qPrintable(chosen));
        QVERIFY(welcome->taskChoice()->currentText().contains("with a solution"));
        welcome->taskChoice()->setCurrentIndex(welcome->taskChoice()->findData(
            QString::fromStdString(kwb::bundledTasksDirectory()) + "/03_softmax.py"));
        QTest::mouseClick(welcome->openTaskButton(), Qt::LeftButton);
        QVERIFY(window.currentTaskPath().endsWith("03_softmax.py"));
        QVERIFY(!welcome->isVisible()); // the task is open: the page steps aside
        // "Show this at start" is a setting.
        welcome->showAtStartBox()->setChecked(false);
        QVERIFY(!settings.showWelcomeAtStart());
    }

    void aModelIsTriedThenKeptForAgents() {
        ScriptedLlmServer server(
            json{{"turns",
                  {{{"text", "ready"}}, {{"text", "x"}, {"faults", {{{"kind", "http_401"}}}}}}}});
        QVERIFY2(server.started(), server.startError().c_str());
        QTemporaryDir dir;
        {
            AppSettings settings(dir.filePath("s.ini"));
            MainWindow window(settings);
            window.showWelcome();
            WelcomeDialog* welcome = window.welcomeDialog();
            welcome->baseUrlField()->setText(QString::fromStdString(server.url("/v1")));
            welcome->modelField()->setText("scripted-model");
            welcome->apiKeyEnvField()->setText("KWB_TEST_UNSET_KEY");
            QTest::mouseClick(welcome->testButton(), Qt::LeftButton);
            QTRY_VERIFY_WITH_TIMEOUT(welcome->connectionText().startsWith("Connected"), 30000);
            QVERIFY2(welcome->connectionText().contains("\"ready\""),
                     qPrintable(welcome->connectionText()));
            // The server refuses the next request: the page says so, as the agent would meet it.
            QTest::mouseClick(welcome->testButton(), Qt::LeftButton);
            QTRY_VERIFY_WITH_TIMEOUT(welcome->connectionText().startsWith("Not connected"), 30000);

            QSignalSpy chosen(welcome, &WelcomeDialog::providerChosen);
            QTest::mouseClick(welcome->useButton(), Qt::LeftButton);
            QCOMPARE(chosen.count(), 1);
            const auto kept = settings.agentProvider();
            QCOMPARE(kept.kind, QStringLiteral("openai"));
            QCOMPARE(kept.model, QStringLiteral("scripted-model"));
            QCOMPARE(kept.apiKeyEnv, QStringLiteral("KWB_TEST_UNSET_KEY"));
            const auto launch = window.agentPanes()->agentPane()->startRequest();
            QCOMPARE(launch.provider.model, std::string("scripted-model"));
            QCOMPARE(launch.provider.baseUrl, server.url("/v1"));
            QCOMPARE(launch.provider.apiKeyEnv, std::string("KWB_TEST_UNSET_KEY"));
        }
        // After a restart the Agent tab starts with it.
        AppSettings settings(dir.filePath("s.ini"));
        MainWindow window(settings);
        const auto launch = window.agentPanes()->agentPane()->startRequest();
        QCOMPARE(launch.provider.model, std::string("scripted-model"));
        QCOMPARE(launch.provider.baseUrl, server.url("/v1"));
    }
};

QTEST_MAIN(TestWelcomeDialog)
#include "test_welcome_dialog.moc"
