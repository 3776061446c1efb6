#include "widgets/training/tuning_run_controller.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <csignal>

namespace kwb::ui {

namespace {
// Enough of the error output for the reason a run ended; progress lines come before it.
constexpr int kKeptErrorChars = 4000;
} // namespace

TuningRunController::TuningRunController(QObject* parent) : QObject(parent) {}

TuningRunController::~TuningRunController() {
    if (process_) {
        // The workbench is closing: the run stops as Ctrl+C would, keeping what it finished.
        stop();
        if (!process_->waitForFinished(10000))
            process_->kill();
        process_->waitForFinished(2000);
    }
}

QString TuningRunController::kwbExecutable() {
    const QString overridden = qEnvironmentVariable("KWB_CLI");
    if (!overridden.isEmpty())
        return overridden;
    const QDir here(QCoreApplication::applicationDirPath());
    for (const QString& candidate :
         {here.filePath(QStringLiteral("kwb")), here.filePath(QStringLiteral("../cli/kwb"))}) {
        const QFileInfo file(candidate);
        if (file.isFile() && file.isExecutable())
            return file.canonicalFilePath();
    }
    return {};
}

bool TuningRunController::start(const QString& config, const QString& folder,
                                const QString& model) {
    QStringList arguments = {QStringLiteral("train"),    QStringLiteral("tune"),
                             QStringLiteral("--config"), config,
                             QStringLiteral("--out"),    folder};
    if (!model.isEmpty())
        arguments << QStringLiteral("--model") << model;
    return launch(arguments);
}

bool TuningRunController::resume(const QString& folder) {
    return launch(
        {QStringLiteral("train"), QStringLiteral("tune"), QStringLiteral("--resume"), folder});
}

bool TuningRunController::launch(const QStringList& arguments) {
    if (process_) {
        emit ended(false, tr("A tuning run is going on; stop it first."));
        return false;
    }
    const QString kwb = kwbExecutable();
    if (kwb.isEmpty()) {
        emit ended(false, tr("kwb is not installed beside the workbench (set KWB_CLI to it)."));
        return false;
    }
    errors_.clear();
    process_ = new QProcess(this);
    process_->setProgram(kwb);
    process_->setArguments(arguments);
    process_->setProcessChannelMode(QProcess::SeparateChannels);
    process_->setStandardOutputFile(QProcess::nullDevice()); // the summary: the folder has it
    connect(process_, &QProcess::readyReadStandardError, this, [this] {
        errors_ += QString::fromUtf8(process_->readAllStandardError());
        if (errors_.size() > kKeptErrorChars)
            errors_ = errors_.right(kKeptErrorChars);
    });
    connect(process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        QProcess* done = process_;
        process_ = nullptr;
        done->deleteLater();
        const QString tail = errors_.trimmed();
        const bool ok = status == QProcess::NormalExit && code == 0;
        emit runningChanged(false);
        emit ended(ok, ok ? tail.section(QLatin1Char('\n'), -1)
                          : tr("kwb train tune ended with %1: %2")
                                .arg(status == QProcess::NormalExit ? tr("exit code %1").arg(code)
                                                                    : tr("a crash"))
                                .arg(tail.isEmpty() ? tr("no message") : tail));
    });
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart || !process_)
            return;
        const QString why = process_->errorString();
        process_->deleteLater();
        process_ = nullptr;
        emit runningChanged(false);
        emit ended(false, tr("kwb could not start: %1").arg(why));
    });
    // Before start(): a program that cannot start may report it from inside start().
    emit runningChanged(true);
    process_->start();
    return true;
}

void TuningRunController::stop() {
    if (process_ && process_->processId() > 0)
        ::kill(static_cast<pid_t>(process_->processId()), SIGINT);
}

} // namespace kwb::ui
