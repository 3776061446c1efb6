#include "widgets/result/result_panel.h"

#include "engine/evaluation/evaluation_comparison.h"
#include "widgets/common/empty_state_pane.h"
#include "widgets/core/workbench_fonts.h"
#include "widgets/models/result_details_model.h"

#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QStackedWidget>
#include <QTreeView>
#include <QVBoxLayout>

namespace kwb::ui {
namespace {

QString speedup(double value) {
    return value > 0 ? QStringLiteral("%1×").arg(value, 0, 'f', 2) : QStringLiteral("—");
}

QString signedNumber(double value, int decimals) {
    return (value >= 0 ? QStringLiteral("+") : QString()) + QString::number(value, 'f', decimals);
}

// "0.123 ms ± 0.004 (CV 3.2 %, 5 rounds, stable)" or why it was not timed.
QString timing(const kwb::TimingStats& t) {
    if (!t.available)
        return t.unavailableReason.empty()
                   ? QObject::tr("not timed")
                   : QObject::tr("not timed (%1)").arg(QString::fromStdString(t.unavailableReason));
    return QObject::tr("%1 ms ± %2 (CV %3 %, round CV %4 %, %5 round(s)%6)")
        .arg(t.medianMs, 0, 'f', 4)
        .arg(t.stdevMs, 0, 'f', 4)
        .arg(100.0 * t.cv, 0, 'f', 1)
        .arg(100.0 * t.roundCv, 0, 'f', 1)
        .arg(t.rounds)
        .arg(t.stable ? QObject::tr(", stable") : QObject::tr(", not stable"));
}

QString colored(const QString& text, const QColor& color) {
    return QStringLiteral("<span style=\"color:%1\">%2</span>")
        .arg(color.name(), text.toHtmlEscaped());
}

// Failures that are facts about the machine or the user's action, not about the candidate.
bool isEnvironmentOutcome(const std::string& kind) {
    return kind == "no_gpu" || kind == "cancelled" || kind == "python_missing";
}

QString explanationFor(const kwb::EvaluationResult& r) {
    if (r.failureKind == "no_gpu")
        return QObject::tr(
            "No CUDA GPU on this machine. The kernels compiled, but fast-path (kwb_kernels) "
            "candidates can only be verified and timed on a GPU, so there is no speed-up or "
            "reward here. Nothing crashed: evaluate on a GPU host for a verdict.");
    if (r.failureKind == "cancelled")
        return QObject::tr("A newer save replaced this evaluation before it finished.");
    if (r.failureKind == "python_missing")
        return QObject::tr("The task Python was not found: set it in File > Settings.");
    return {};
}

} // namespace

ResultPanel::ResultPanel(QWidget* parent)
    : QWidget(parent), stack_(new QStackedWidget(this)),
      empty_(new EmptyStatePane(
          tr("No evaluation yet"),
          tr("Open a workspace (File > Open Workspace…) and save a candidate file with Ctrl+S "
             "while Verify on Save is on, or select an evaluation step of an episode."),
          this)),
      title_(new QLabel(this)), verdict_(new QLabel(this)), explanation_(new QLabel(this)),
      running_(new QLabel(this)), reward_(new QLabel(this)), speedups_(new QLabel(this)),
      timing_(new QLabel(this)), comparison_(new QLabel(this)), baseline_(new QLabel(this)),
      tree_(new QTreeView(this)), log_(new QPlainTextEdit(this)),
      model_(new ResultDetailsModel(this)) {
    QFont big = verdict_->font();
    big.setPointSizeF(big.pointSizeF() * 1.25);
    big.setBold(true);
    verdict_->setFont(big);
    for (QLabel* label : {title_, verdict_, explanation_, running_, reward_, speedups_, timing_,
                          comparison_, baseline_}) {
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        // The text never sets the dock's width: a long path or message without spaces would
        // otherwise widen the whole right column (the tabs move under the mouse).
        label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    }
    explanation_->setAutoFillBackground(true);
    explanation_->setBackgroundRole(QPalette::AlternateBase);
    explanation_->setContentsMargins(6, 4, 6, 4);
    running_->hide();

    tree_->setModel(model_);
    tree_->setUniformRowHeights(true);
    tree_->setAlternatingRowColors(true);
    tree_->header()->setStretchLastSection(true);
    tree_->header()->setSectionResizeMode(ResultDetailsModel::Name, QHeaderView::ResizeToContents);
    log_->setReadOnly(true);
    log_->setLineWrapMode(QPlainTextEdit::NoWrap);
    log_->setPlaceholderText(tr("Select a stage or a flag to read its log or reason."));
    log_->setFont(codeFont(9));

    auto* form = new QFormLayout;
    form->addRow(tr("Reward"), reward_);
    form->addRow(tr("Speed-up"), speedups_);
    form->addRow(tr("Candidate"), timing_);
    form->addRow(tr("Baselines"), baseline_);
    form->addRow(tr("vs previous"), comparison_);

    auto* header = new QWidget(this);
    auto* headerLayout = new QVBoxLayout(header);
    headerLayout->addWidget(title_);
    headerLayout->addWidget(verdict_);
    headerLayout->addWidget(explanation_);
    headerLayout->addWidget(running_);
    headerLayout->addLayout(form);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(header);
    split->addWidget(tree_);
    split->addWidget(log_);
    split->setStretchFactor(1, 1);
    stack_->addWidget(empty_);
    stack_->addWidget(split);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(stack_);

    connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) { showLogFor(current); });
    connect(model_, &QAbstractItemModel::modelReset, this, [this] {
        tree_->expandAll();
        log_->clear();
    });
}

void ResultPanel::showLiveEvaluation(ResultPtr result, const QString& title) {
    ResultPtr previous = lastLive_;
    lastLive_ = result;
    showEvaluation(std::move(result), std::move(previous), title);
}

void ResultPanel::showEvaluation(ResultPtr result, ResultPtr previous, const QString& title) {
    shown_ = result;
    model_->setResult(result);
    if (!result) {
        verdictPlain_.clear();
        stack_->setCurrentWidget(empty_);
        return;
    }
    const kwb::EvaluationResult& r = *result;
    stack_->setCurrentIndex(1);
    title_->setText(title);

    QColor verdictColor(0x3f, 0xae, 0x5a);
    if (isEnvironmentOutcome(r.failureKind))
        verdictColor = severityColor(kwb::FlagSeverity::Warning);
    else if (!r.failureKind.empty() || r.hasStrictFlag() || !r.correct)
        verdictColor = severityColor(kwb::FlagSeverity::Strict);
    else if (r.speedupVsEager > 0 && r.speedupVsEager < 1.0)
        // Correct but slower than eager PyTorch: not a success to paint green.
        verdictColor = severityColor(kwb::FlagSeverity::Warning);
    verdictColor_ = verdictColor;
    verdictPlain_ = QString::fromStdString(r.verdict());
    verdict_->setText(colored(verdictPlain_, verdictColor));
    const QString explanation = explanationFor(r);
    explanation_->setText(explanation);
    explanation_->setVisible(!explanation.isEmpty());

    reward_->setText(QStringLiteral("%1 — %2").arg(r.reward).arg(
        QString::fromStdString(r.rewardReason).toHtmlEscaped()));
    speedups_->setText(tr("%1 vs eager · %2 vs torch.compile")
                           .arg(speedup(r.speedupVsEager), speedup(r.speedupVsCompile)));
    timing_->setText(timing(r.candidate).toHtmlEscaped());
    baseline_->setText(
        tr("eager %1<br>torch.compile %2%3")
            .arg(timing(r.eager).toHtmlEscaped(), timing(r.compiledBaseline).toHtmlEscaped(),
                 r.baselinesFromCache ? tr("<br>(baselines from the cache)") : QString()));

    if (!previous) {
        comparison_->setText(tr("no earlier evaluation to compare with"));
        return;
    }
    const EvaluationComparison c = compareEvaluations(*previous, r);
    QStringList parts;
    parts << tr("reward %1")
                 .arg(c.rewardDelta == 0 ? tr("unchanged") : signedNumber(c.rewardDelta, 0));
    parts << tr("vs eager %1")
                 .arg(c.speedupVsEagerDelta
                          ? signedNumber(*c.speedupVsEagerDelta, 2) + QStringLiteral("×")
                          : tr("n/a"));
    parts << tr("vs torch.compile %1")
                 .arg(c.speedupVsCompileDelta
                          ? signedNumber(*c.speedupVsCompileDelta, 2) + QStringLiteral("×")
                          : tr("n/a"));
    for (const auto& code : c.flagsAdded)
        parts << tr("flag added: %1").arg(QString::fromStdString(code));
    for (const auto& code : c.flagsRemoved)
        parts << tr("flag removed: %1").arg(QString::fromStdString(code));
    comparison_->setText(parts.join(QStringLiteral(" · ")).toHtmlEscaped());
}

void ResultPanel::showRunning(const QString& stage) {
    running_->setVisible(!stage.isEmpty());
    running_->setText(stage.isEmpty() ? QString() : tr("Evaluating… stage: %1").arg(stage));
    if (!stage.isEmpty() && !shown_) {
        stack_->setCurrentIndex(1);
        title_->setText(tr("First evaluation"));
        verdict_->clear();
        verdictPlain_.clear();
    } else if (stage.isEmpty() && !shown_) {
        stack_->setCurrentWidget(empty_); // a first run that ended without a result
    }
}

void ResultPanel::showLogFor(const QModelIndex& index) {
    if (!index.isValid()) {
        log_->clear();
        return;
    }
    log_->setPlainText(index.siblingAtColumn(0).data(ResultDetailsModel::FullTextRole).toString());
}

bool ResultPanel::showsEmptyState() const {
    return stack_->currentWidget() == empty_;
}

QString ResultPanel::verdictText() const {
    return verdictPlain_;
}

QString ResultPanel::rewardText() const {
    return reward_->text();
}

QString ResultPanel::speedupText() const {
    return speedups_->text();
}

QString ResultPanel::comparisonText() const {
    return comparison_->text();
}

QString ResultPanel::baselineText() const {
    return baseline_->text();
}

QString ResultPanel::runningText() const {
    return running_->isHidden() ? QString() : running_->text();
}

QString ResultPanel::titleText() const {
    return title_->text();
}

QString ResultPanel::logText() const {
    return log_->toPlainText();
}

} // namespace kwb::ui
