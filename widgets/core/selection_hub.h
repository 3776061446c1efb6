#pragma once

#include "widgets/core/workbench_context.h"

#include <QObject>
#include <QString>

namespace kwb::ui {

// The one owner of "what is selected" across the panes: the context (task, workspace or
// episode, workbench_context.h), an agent step, an evaluation, a kernel with its time range. Panes
// call the select* slots and follow the *Selected signals. A request that matches the current
// selection is ignored, so a pane that echoes a selection back (it selects the row, which emits its
// own "selected" signal) ends the round trip instead of looping.
class SelectionHub : public QObject {
    Q_OBJECT
public:
    explicit SelectionHub(QObject* parent = nullptr);

    qint64 episodeId() const { return episodeId_; }
    qint64 step() const { return step_; }
    quint64 evaluationId() const { return evaluationId_; }
    QString kernelName() const { return kernelName_; }
    qint64 kernelStartNs() const { return startNs_; }
    qint64 kernelEndNs() const { return endNs_; }
    const WorkbenchContext& context() const { return context_; }

public slots:
    // A new target (another task, workspace or episode), or the same one without a step, forgets
    // the step selected before, so selecting "step 6" again after coming back is a new
    // selection, not an echo.
    void setContext(const kwb::ui::WorkbenchContext& context);
    // Leave or resume following the live agent (a no-op outside a live episode).
    void setFollowing(bool following);
    void selectStep(qint64 episodeId, qint64 step);
    // An evaluation of the edit loop (the bridge's evaluation id).
    void selectEvaluation(quint64 evaluationId);
    void selectKernel(const QString& name, qint64 startNs, qint64 endNs);
    void clear();

signals:
    void contextChanged(const kwb::ui::WorkbenchContext& context);
    void stepSelected(qint64 episodeId, qint64 step);
    void evaluationSelected(quint64 evaluationId);
    void kernelSelected(const QString& name, qint64 startNs, qint64 endNs);

private:
    WorkbenchContext context_;
    qint64 episodeId_ = 0;
    qint64 step_ = 0;
    quint64 evaluationId_ = 0;
    QString kernelName_;
    qint64 startNs_ = 0;
    qint64 endNs_ = 0;
};

} // namespace kwb::ui
