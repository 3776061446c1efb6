#pragma once

#include <QObject>
#include <QString>

namespace kwb::ui {

// The one owner of "what is selected" across the panes: an agent step, an evaluation, a kernel
// with its time range. Panes call the select* slots and follow the *Selected signals. A request
// that matches the current selection is ignored, so a pane that echoes a selection back (it
// selects the row, which emits its own "selected" signal) ends the round trip instead of looping.
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

public slots:
    void selectStep(qint64 episodeId, qint64 step);
    // An evaluation of the edit loop (the bridge's evaluation id).
    void selectEvaluation(quint64 evaluationId);
    void selectKernel(const QString& name, qint64 startNs, qint64 endNs);
    void clear();

signals:
    void stepSelected(qint64 episodeId, qint64 step);
    void evaluationSelected(quint64 evaluationId);
    void kernelSelected(const QString& name, qint64 startNs, qint64 endNs);

private:
    qint64 episodeId_ = 0;
    qint64 step_ = 0;
    quint64 evaluationId_ = 0;
    QString kernelName_;
    qint64 startNs_ = 0;
    qint64 endNs_ = 0;
};

} // namespace kwb::ui
