#pragma once

#include "engine/diagnostics/diagnostics_service.h"

#include <QHash>
#include <QObject>
#include <QString>
#include <memory>

namespace kwb::ui {

// The GUI's diagnostics-while-typing: one DiagnosticsService (its own worker thread, newest
// request per file wins) whose results reach the UI thread through queued calls. Kept apart from
// EngineBridge because a compile per keystroke burst must not queue behind a task list or a
// store read on the engine thread, and the service already debounces and cancels per file.
class KernelDiagnosticsController : public QObject {
    Q_OBJECT
public:
    // Quiet period before a compile starts; one compile per burst of keystrokes.
    static constexpr int kDefaultDebounceMs = 250;

    explicit KernelDiagnosticsController(QObject* parent = nullptr);
    KernelDiagnosticsController(kwb::diagnostics::DiagnosticsService::Options options,
                                QObject* parent = nullptr);
    ~KernelDiagnosticsController() override; // joins the service's worker, nothing else

    // .cu and .cuh files: the ones NVRTC or nvcc can check alone.
    static bool checksFile(const QString& path);

    // Returns at once. `path` is the file's absolute path on disk: diagnostics name it and its
    // folder is an include path; `text` is the editor's text.
    void submit(const QString& path, const QString& text);
    // The file was closed: its result is dropped, and an answer still in flight is ignored.
    void forget(const QString& path);
    void forgetAll();

    // The newest delivered result for `path` (a syntax-only pass replaces a full one).
    std::shared_ptr<const kwb::diagnostics::KernelCheckResult>
    latestResult(const QString& path) const;
    // The newest full compile without errors (PTX, resources): older than latestResult while
    // the file has errors or a syntax-only pass leads.
    std::shared_ptr<const kwb::diagnostics::KernelCheckResult>
    latestCompiledResult(const QString& path) const;
    int pendingCount() const { return pending_.size(); }

signals:
    void resultReady(const QString& path,
                     std::shared_ptr<const kwb::diagnostics::KernelCheckResult> result);
    void busyChanged(bool busy);

private:
    void deliver(const QString& path, quint64 generation,
                 std::shared_ptr<const kwb::diagnostics::KernelCheckResult> result);

    QHash<QString, quint64> generation_; // per file, the newest generation submitted here
    QHash<QString, quint64> pending_;    // files whose newest request has no final answer yet
    QHash<QString, std::shared_ptr<const kwb::diagnostics::KernelCheckResult>> latest_;
    QHash<QString, std::shared_ptr<const kwb::diagnostics::KernelCheckResult>> latestCompiled_;
    // Last member: destroyed first, so its worker is joined before the maps above go away.
    std::unique_ptr<kwb::diagnostics::DiagnosticsService> service_;
};

} // namespace kwb::ui
