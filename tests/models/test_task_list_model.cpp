#include "engine/system/resource_paths.h"
#include "widgets/models/task_list_model.h"

#include <QAbstractItemModelTester>
#include <QTest>

using namespace kwb;
using namespace kwb::ui;

class TestTaskListModel : public QObject {
    Q_OBJECT
private slots:
    void passesTheModelTesterThroughResets() {
        TaskListModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setTasks(kwb::listTasks(kwb::bundledTasksDirectory()));
        QVERIFY(model.rowCount() >= 8);
        model.setTasks({});
        QCOMPARE(model.rowCount(), 0);
        model.setTasks(kwb::listTasks(kwb::bundledTasksDirectory()));
    }

    void exposesTaskFieldsThroughRoles() {
        TaskListModel model;
        model.setTasks(kwb::listTasks(kwb::bundledTasksDirectory()));
        const int row = model.rowOfPath(QString::fromStdString(kwb::bundledTasksDirectory()) +
                                        "/05_gemm_bias_relu.py");
        QVERIFY(row >= 0);
        const QModelIndex index = model.index(row);
        QCOMPARE(index.data(TaskListModel::IdRole).toString(), QString("05_gemm_bias_relu"));
        QCOMPARE(index.data(TaskListModel::CategoryRole).toString(), QString("gemm-fusion"));
        QVERIFY(!index.data(Qt::DisplayRole).toString().isEmpty());
        QVERIFY(index.data(TaskListModel::HasSolutionRole).toBool());
        QVERIFY(!model.data(model.index(row), Qt::DecorationRole).isValid());
        QCOMPARE(model.rowOfPath("/nope.py"), -1);
        QVERIFY(model.taskAt(-1) == nullptr);
        QVERIFY(model.taskAt(model.rowCount()) == nullptr);
    }
};

QTEST_GUILESS_MAIN(TestTaskListModel)
#include "test_task_list_model.moc"
