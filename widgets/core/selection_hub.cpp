#include "widgets/core/selection_hub.h"

#include "agent/store/edit_history.h"

namespace kwb::ui {

SelectionHub::SelectionHub(QObject* parent) : QObject(parent) {}

void SelectionHub::setContext(const WorkbenchContext& context) {
    if (context == context_)
        return;
    const bool pinsSelectedStep = context.kind == WorkbenchContext::Kind::Episode &&
                                  context.episodeId == episodeId_ && context.step == step_;
    if ((!context.sameTarget(context_) || context.step < 0) && !pinsSelectedStep)
        episodeId_ = step_ = 0;
    context_ = context;
    emit contextChanged(context_);
}

void SelectionHub::setFollowing(bool following) {
    if (!context_.live || context_.following == following)
        return;
    context_.following = following;
    if (following) {
        context_.step = -1;
        episodeId_ = step_ = 0;
    }
    emit contextChanged(context_);
}

void SelectionHub::selectStep(qint64 episodeId, qint64 step) {
    if (episodeId == episodeId_ && step == step_)
        return;
    episodeId_ = episodeId;
    step_ = step;
    // A step the user picks in the context's episode (or history) pins it: a live episode is
    // no longer followed.
    if (context_.kind == WorkbenchContext::Kind::Episode && context_.episodeId == episodeId) {
        context_.step = step;
        context_.following = false;
        emit contextChanged(context_);
    } else if (context_.kind == WorkbenchContext::Kind::Workspace &&
               episodeId == agent::kEditHistoryEpisodeId) {
        context_.step = step;
        emit contextChanged(context_);
    }
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
