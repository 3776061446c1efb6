#include "widgets/core/selection_hub.h"

namespace kwb::ui {

SelectionHub::SelectionHub(QObject* parent) : QObject(parent) {}

void SelectionHub::selectStep(qint64 episodeId, qint64 step) {
    if (episodeId == episodeId_ && step == step_)
        return;
    episodeId_ = episodeId;
    step_ = step;
    emit stepSelected(episodeId, step);
}

void SelectionHub::selectEvaluation(quint64 evaluationId) {
    if (evaluationId == evaluationId_)
        return;
    evaluationId_ = evaluationId;
    emit evaluationSelected(evaluationId);
}

void SelectionHub::selectKernel(const QString& name, qint64 startNs, qint64 endNs) {
    if (name == kernelName_ && startNs == startNs_ && endNs == endNs_)
        return;
    kernelName_ = name;
    startNs_ = startNs;
    endNs_ = endNs;
    emit kernelSelected(name, startNs, endNs);
}

void SelectionHub::clear() {
    episodeId_ = step_ = 0;
    evaluationId_ = 0;
    kernelName_.clear();
    startNs_ = endNs_ = 0;
}

} // namespace kwb::ui
