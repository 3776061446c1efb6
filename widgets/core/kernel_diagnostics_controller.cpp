#include "widgets/core/kernel_diagnostics_controller.h"

#include <QFileInfo>
#include <QMetaObject>
#include <QPointer>

namespace kwb::ui {
namespace {

kwb::diagnostics::DiagnosticsService::Options defaultOptions() {
    kwb::diagnostics::DiagnosticsService::Options options;
    options.debounce = std::chrono::milliseconds(KernelDiagnosticsController::kDefaultDebounceMs);
    options.wantSass = true; // only runs where cuobjdump or nvdisasm exists
    return options;
}

} // namespace

KernelDiagnosticsController::KernelDiagnosticsController(QObject* parent)
    : KernelDiagnosticsController(defaultOptions(), parent) {}

KernelDiagnosticsController::KernelDiagnosticsController(
    kwb::diagnostics::DiagnosticsService::Options options, QObject* parent)
    : QObject(parent) {
    QPointer<KernelDiagnosticsController> self(this);
    service_ = std::make_unique<kwb::diagnostics::DiagnosticsService>(
        [self](const std::string& path, std::uint64_t generation,
               std::shared_ptr<const kwb::diagnostics::KernelCheckResult> result) {
            // Worker thread. The queued call is dropped by Qt if the controller is gone.
            QMetaObject::invokeMethod(
                self.data(),
                [self, path = QString::fromStdString(path), generation,
                 result = std::move(result)]() mutable {
                    if (self)
                        self->deliver(path, generation, std::move(result));
                },
                Qt::QueuedConnection);
        },
        std::move(options));
}

KernelDiagnosticsController::~KernelDiagnosticsController() {
    service_.reset();
}

bool KernelDiagnosticsController::checksFile(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    return suffix == QLatin1String("cu") || suffix == QLatin1String("cuh");
}

void KernelDiagnosticsController::submit(const QString& path, const QString& text) {
    const bool wasBusy = !pending_.isEmpty();
    const quint64 generation = service_->submit(path.toStdString(), text.toStdString());
    generation_[path] = generation;
    pending_[path] = generation;
    if (!wasBusy)
        emit busyChanged(true);
}

void KernelDiagnosticsController::forget(const QString& path) {
    const bool wasBusy = !pending_.isEmpty();
    generation_.remove(path);
    pending_.remove(path);
    latest_.remove(path);
    latestCompiled_.remove(path);
    if (wasBusy && pending_.isEmpty())
        emit busyChanged(false);
}

void KernelDiagnosticsController::forgetAll() {
    const bool wasBusy = !pending_.isEmpty();
    generation_.clear();
    pending_.clear();
    latest_.clear();
    latestCompiled_.clear();
    if (wasBusy)
        emit busyChanged(false);
}

std::shared_ptr<const kwb::diagnostics::KernelCheckResult>
KernelDiagnosticsController::latestResult(const QString& path) const {
    return latest_.value(path);
}

std::shared_ptr<const kwb::diagnostics::KernelCheckResult>
KernelDiagnosticsController::latestCompiledResult(const QString& path) const {
    return latestCompiled_.value(path);
}

void KernelDiagnosticsController::deliver(
    const QString& path, quint64 generation,
    std::shared_ptr<const kwb::diagnostics::KernelCheckResult> result) {
    // The service already drops superseded results on its thread; this catches a submit or a
    // forget made on the UI thread after the result was queued.
    if (!result || result->cancelled || generation_.value(path) != generation)
        return;
    latest_[path] = result;
    if (!result->syntaxOnly && result->errorCount() == 0)
        latestCompiled_[path] = result;
    // A clean syntax-only pass is followed by the full compile under the same generation.
    const bool final = !result->syntaxOnly || result->errorCount() > 0;
    if (final && pending_.value(path) == generation) {
        pending_.remove(path);
        if (pending_.isEmpty())
            emit busyChanged(false);
    }
    emit resultReady(path, result);
}

} // namespace kwb::ui
