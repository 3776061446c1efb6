#pragma once

#include "engine/evaluation/evaluation_result.h"

#include <QColor>
#include <QWidget>
#include <memory>

class QLabel;
class QPlainTextEdit;
class QStackedWidget;
class QTreeView;

namespace kwb::ui {

class EmptyStatePane;
class ResultDetailsModel;

// The "Result" dock: one evaluation's verdict, reward, speed-ups with their spread, integrity
// flags, stages and logs, compared with the evaluation before it and with the baselines. Shows
// an empty state until the first evaluation, and what is running while one runs.
class ResultPanel : public QWidget {
    Q_OBJECT
public:
    using ResultPtr = std::shared_ptr<const kwb::EvaluationResult>;

    explicit ResultPanel(QWidget* parent = nullptr);

    // `previous` (may be null) is what the comparison line measures against; `title` says
    // where the result comes from ("Evaluation 3 of ws/" or "Episode 12, step 7").
    void showEvaluation(ResultPtr result, ResultPtr previous, const QString& title);
    // An evaluation of the edit loop: compared with the previous edit-loop result.
    void showLiveEvaluation(ResultPtr result, const QString& title);
    void showRunning(const QString& stage); // empty: the run ended (or was superseded)

    bool showsEmptyState() const;
    ResultPtr shownResult() const { return shown_; }
    ResultPtr lastLiveResult() const { return lastLive_; }
    QString verdictText() const;
    // The verdict's colour: green for a correct candidate at least as fast as eager, amber for
    // a slower one or the environment's outcome, red for a failure.
    QColor verdictColor() const { return verdictColor_; }
    QString rewardText() const;
    QString speedupText() const;
    QString comparisonText() const;
    QString baselineText() const;
    QString runningText() const;
    QString titleText() const;
    ResultDetailsModel* detailsModel() const { return model_; }
    QTreeView* detailsView() const { return tree_; }
    QString logText() const;

private:
    void showLogFor(const QModelIndex& index);

    QStackedWidget* stack_;
    EmptyStatePane* empty_;
    QLabel* title_;
    QLabel* verdict_;
    QLabel* explanation_;
    QLabel* running_;
    QLabel* reward_;
    QLabel* speedups_;
    QLabel* timing_;
    QLabel* comparison_;
    QLabel* baseline_;
    QTreeView* tree_;
    QPlainTextEdit* log_;
    ResultDetailsModel* model_;
    QString verdictPlain_;
    QColor verdictColor_;
    ResultPtr shown_;
    ResultPtr lastLive_;
};

} // namespace kwb::ui
