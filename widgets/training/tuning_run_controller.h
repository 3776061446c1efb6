#pragma once

#include <QObject>
#include <QProcess>
#include <QString>

namespace kwb::ui {

// A `kwb train tune` run started from the workbench: a child process, so that the policy
// (kwb-model) and the evaluations it drives live and fail outside the GUI, exactly as from the
// shell. The run's folder is where the view follows it; the process's own error output explains
// a run that could not start or ended with an error.
class TuningRunController : public QObject {
    Q_OBJECT
public:
    explicit TuningRunController(QObject* parent = nullptr);
    ~TuningRunController() override;

    // The kwb beside the workbench (installed: the same folder; a build tree: app/cli), or
    // KWB_CLI; empty when there is none.
    static QString kwbExecutable();

    bool isRunning() const { return process_ != nullptr; }
    // A new run with the settings file `config` into `folder` (which must be empty or absent);
    // `model` (a GGUF file or model folder), when given, instead of the settings' own.
    bool start(const QString& config, const QString& folder, const QString& model = {});
    // Continues the stopped run in `folder` from its checkpoint.
    bool resume(const QString& folder);
    // Asks the run to stop as Ctrl+C does: it keeps every sample and step it finished.
    void stop();

signals:
    void runningChanged(bool running);
    // The process ended: `ok` when it exited 0 (finished or stopped), else `message` says why.
    void ended(bool ok, const QString& message);

private:
    bool launch(const QStringList& arguments);

    QProcess* process_ = nullptr;
    QString errors_; // the tail of its error output
};

} // namespace kwb::ui
