#include "widgets/agent/agent_pane.h"

#include "agent/store/model_prices.h"
#include "engine/model/model_files.h"
#include "engine/system/python_environment.h"
#include "widgets/agent/conversation_delegate.h"
#include "widgets/models/conversation_model.h"

#include <QAction>
#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSpinBox>
#include <QTextCursor>
#include <QToolButton>
#include <QVBoxLayout>

namespace kwb::ui {
namespace {

using agent::AgentState;
using agent::EventKind;

QString tokens(std::int64_t n) {
    return n >= 10000 ? QStringLiteral("%1k").arg(double(n) / 1000.0, 0, 'f', 1)
                      : QString::number(n);
}

// The runner's own fallback estimate (about four characters a token) over what the model would
// see now. The provider reports usage per call, but the store keeps only the episode's sum, so
// this is labelled an estimate.
std::int64_t estimatedContextTokens(const agent::EpisodeSnapshot& episode) {
    std::size_t chars = 0;
    for (const auto& event : episode.events)
        if (event->kind == EventKind::SystemPrompt || event->kind == EventKind::UserMessage ||
            event->kind == EventKind::AssistantMessage || event->kind == EventKind::ToolResult)
            chars += event->payload.value("text", std::string()).size();
    return static_cast<std::int64_t>(chars / 4);
}

QString lastToolName(const agent::EpisodeSnapshot& episode) {
    for (auto it = episode.events.rbegin(); it != episode.events.rend(); ++it)
        if ((*it)->kind == EventKind::ToolCall)
            return QString::fromStdString((*it)->payload.value("name", std::string()));
    return {};
}

// "stuck: ..." when the last status event says so, else empty.
QString stuckNote(const agent::EpisodeSnapshot& episode) {
    for (auto it = episode.events.rbegin(); it != episode.events.rend(); ++it)
        if ((*it)->kind == EventKind::Status) {
            const auto message =
                QString::fromStdString((*it)->payload.value("message", std::string()));
            return message.startsWith(QLatin1String("stuck")) ? message : QString();
        }
    return {};
}

QString lastError(const agent::EpisodeSnapshot& episode) {
    for (auto it = episode.events.rbegin(); it != episode.events.rend(); ++it)
        if ((*it)->kind == EventKind::Error)
            return QString::fromStdString((*it)->payload.value("message", std::string()));
    return {};
}

QAction* steeringAction(QWidget* owner, const QString& text, const QKeySequence& keys,
                        const QString& what) {
    auto* action = new QAction(text, owner);
    action->setShortcut(keys);
    action->setShortcutContext(Qt::WindowShortcut);
    action->setToolTip(
        QStringLiteral("%1 (%2)").arg(what, keys.toString(QKeySequence::NativeText)));
    owner->addAction(action);
    return action;
}

} // namespace

AgentPane::AgentPane(AgentSessionController& controller, QWidget* parent)
    : QWidget(parent), controller_(controller), model_(new ConversationModel(this)),
      view_(new QListView(this)), header_(new QLabel(this)), status_(new QLabel(this)),
      meters_(new QLabel(this)) {
    view_->setModel(model_);
    view_->setItemDelegate(new ConversationDelegate(view_));
    view_->setWordWrap(true);
    view_->setUniformItemSizes(false);
    view_->setResizeMode(QListView::Adjust);
    view_->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    connect(view_, &QListView::clicked, this, [this](const QModelIndex& index) {
        model_->toggleExpanded(index);
        view_->doItemsLayout(); // an unfolded row is taller
    });
    connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                fork_->setEnabled(current.isValid() && shown_ && !controller_.isRunning());
                if (current.isValid() && shown_)
                    emit stepSelected(shown_->record.id,
                                      current.data(ConversationModel::SequenceRole).toLongLong());
            });

    header_->setWordWrap(true);
    header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont bold = header_->font();
    bold.setBold(true);
    status_->setFont(bold);
    status_->setWordWrap(true);
    meters_->setWordWrap(true);
    meters_->setToolTip(tr("Tokens are the provider's reported usage for this episode. Context "
                           "is estimated at about 4 characters per token. Cost uses list prices "
                           "for known hosted models and is n/a for others."));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(header_);
    layout->addWidget(status_);
    layout->addWidget(meters_);
    layout->addWidget(view_, 1);
    // While the model writes, its reply shows here as it streams; the whole turn joins the
    // conversation once it ends.
    liveReply_ = new QPlainTextEdit(this);
    liveReply_->setObjectName(QStringLiteral("liveReply"));
    liveReply_->setReadOnly(true);
    liveReply_->setMaximumBlockCount(200);
    liveReply_->setMaximumHeight(liveReply_->fontMetrics().lineSpacing() * 5 + 10);
    liveReply_->setPlaceholderText(tr("The model's reply appears here as it streams."));
    liveReply_->hide();
    layout->addWidget(liveReply_);
    connect(&controller_, &AgentSessionController::replyStreamed, this,
            [this](const QString& piece) {
                if (mode_ != Mode::Live)
                    return;
                liveReply_->moveCursor(QTextCursor::End);
                liveReply_->insertPlainText(piece);
                liveReply_->ensureCursorVisible();
                liveReply_->show();
            });
    connect(&controller_, &AgentSessionController::agentStateChanged, this,
            [this](agent::AgentState state) {
                // A new model call starts a new reply; any other state ends the shown one.
                if (state == agent::AgentState::Thinking)
                    liveReply_->clear();
                else
                    liveReply_->hide();
            });

    replayBar_ = new QWidget(this);
    auto* replay = new QHBoxLayout(replayBar_);
    replay->setContentsMargins(0, 0, 0, 0);
    auto* back = new QToolButton(replayBar_);
    back->setText(QStringLiteral("◀"));
    back->setToolTip(tr("Previous step (Alt+Left)"));
    back->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Left));
    auto* forward = new QToolButton(replayBar_);
    forward->setText(QStringLiteral("▶"));
    forward->setToolTip(tr("Next step (Alt+Right)"));
    forward->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Right));
    replaySlider_ = new QSlider(Qt::Horizontal, replayBar_);
    replayLabel_ = new QLabel(replayBar_);
    replay->addWidget(back);
    replay->addWidget(replaySlider_, 1);
    replay->addWidget(forward);
    replay->addWidget(replayLabel_);
    connect(back, &QToolButton::clicked, this, [this] { replayStep(-1); });
    connect(forward, &QToolButton::clicked, this, [this] { replayStep(+1); });
    connect(replaySlider_, &QSlider::valueChanged, this, [this](int value) {
        if (value != replayPosition_)
            replayTo(value);
    });
    replayBar_->hide();
    layout->addWidget(replayBar_);

    layout->addWidget(buildSteeringBar());
    // The form scrolls rather than setting the dock's minimum height: with it open, the right
    // column would not fit a 768 px screen.
    auto* formScroll = new QScrollArea(this);
    formScroll->setObjectName(QStringLiteral("startFormScroll"));
    formScroll->setWidget(buildStartForm());
    formScroll->setWidgetResizable(true);
    formScroll->setFrameShape(QFrame::NoFrame);
    formScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    formScroll->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    layout->addWidget(formScroll);
    connect(startToggle_, &QToolButton::toggled, formScroll, &QWidget::setVisible);
    startToggle_->setChecked(true);

    connect(&controller_, &AgentSessionController::episodeUpdated, this, &AgentPane::onLiveUpdate);
    connect(&controller_, &AgentSessionController::agentStateChanged, this,
            &AgentPane::refreshStatus);
    connect(&controller_, &AgentSessionController::sessionStarted, this, [this] {
        mode_ = Mode::Live;
        refreshStatus();
    });
    connect(&controller_, &AgentSessionController::sessionFinished, this, [this](const QString& m) {
        emit message(m, false);
        refreshStatus();
    });
    connect(&controller_, &AgentSessionController::sessionFailed, this, [this](const QString& m) {
        emit message(m, true);
        status_->setText(tr("Could not run the agent: %1").arg(m));
    });
    refreshStatus();
}

QWidget* AgentPane::buildSteeringBar() {
    auto* bar = new QWidget(this);
    auto* grid = new QVBoxLayout(bar);
    grid->setContentsMargins(0, 0, 0, 0);
    auto* buttons = new QHBoxLayout;
    pause_ = steeringAction(this, tr("Pause"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P),
                            tr("Pause after the current step"));
    interrupt_ = steeringAction(this, tr("Interrupt"), QKeySequence(Qt::CTRL | Qt::Key_Period),
                                tr("Cancel the model call or tool in flight, then pause"));
    resume_ = steeringAction(this, tr("Resume"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R),
                             tr("Continue a paused agent"));
    stop_ = steeringAction(this, tr("Stop"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_X),
                           tr("End the episode; it is stored as stopped"));
    connect(pause_, &QAction::triggered, &controller_, &AgentSessionController::pause);
    connect(interrupt_, &QAction::triggered, &controller_, &AgentSessionController::interrupt);
    connect(resume_, &QAction::triggered, &controller_, &AgentSessionController::resume);
    connect(stop_, &QAction::triggered, &controller_, &AgentSessionController::stop);
    for (QAction* action : {pause_, interrupt_, resume_, stop_}) {
        auto* button = new QToolButton(bar);
        button->setDefaultAction(action);
        buttons->addWidget(button);
    }
    fork_ = new QPushButton(tr("Fork from step"), bar);
    fork_->setToolTip(tr("Start a new episode that continues this one from the selected step, "
                         "with its files as they were then"));
    fork_->setEnabled(false);
    connect(fork_, &QPushButton::clicked, this, &AgentPane::forkFromSelection);
    buttons->addStretch(1);
    startToggle_ = new QToolButton(bar);
    startToggle_->setText(tr("New episode…"));
    startToggle_->setToolTip(tr("Show or hide the form that starts an agent episode"));
    startToggle_->setCheckable(true);
    // Steering on one row, episode actions on the next: one row of six buttons would set the
    // dock's minimum width to most of a 1366 px screen's side column.
    auto* episodeButtons = new QHBoxLayout;
    episodeButtons->addStretch(1);
    episodeButtons->addWidget(fork_);
    episodeButtons->addWidget(startToggle_);
    grid->addLayout(buttons);
    grid->addLayout(episodeButtons);

    auto* messageRow = new QHBoxLayout;
    message_ = new QLineEdit(bar);
    message_->setPlaceholderText(tr("Message to the agent"));
    messageMode_ = new QComboBox(bar);
    messageMode_->addItem(tr("Queue"), int(agent::SteeringController::Mode::Queue));
    messageMode_->addItem(tr("Steer"), int(agent::SteeringController::Mode::Steer));
    messageMode_->setToolTip(tr("Queue: delivered before the next model call.\nSteer: the model "
                                "call streaming now is cancelled and made again with your "
                                "message."));
    send_ = new QPushButton(tr("Send"), bar);
    send_->setToolTip(tr("Send the message (Enter)"));
    messageRow->addWidget(message_, 1);
    messageRow->addWidget(messageMode_);
    messageRow->addWidget(send_);
    grid->addLayout(messageRow);
    connect(send_, &QPushButton::clicked, this, &AgentPane::sendMessage);
    connect(message_, &QLineEdit::returnPressed, this, &AgentPane::sendMessage);
    return bar;
}

QWidget* AgentPane::buildStartForm() {
    auto* box = new QGroupBox(tr("New episode"), this);
    startForm_ = box;
    auto* form = new QFormLayout(box);
    task_ = new QLineEdit(box);
    task_->setPlaceholderText(tr("Open a task first"));
    provider_ = new QComboBox(box);
    // Long provider names must not widen the whole right-hand dock column.
    provider_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    provider_->setMinimumContentsLength(12);
    provider_->addItem(tr("OpenAI-compatible (OpenAI, vLLM, SGLang, llama.cpp, Ollama)"),
                       int(agent::ProviderKind::OpenAiChat));
    provider_->addItem(tr("Anthropic Messages"), int(agent::ProviderKind::AnthropicMessages));
    provider_->addItem(tr("Local model (kwb-model, no server)"),
                       int(agent::ProviderKind::LocalModel));
    baseUrl_ = new QLineEdit(box);
    modelName_ = new QComboBox(box);
    modelName_->setEditable(true);
    apiKeyEnv_ = new QLineEdit(box);
    maxTurns_ = new QSpinBox(box);
    maxTurns_->setRange(1, 10000);
    maxTurns_->setValue(50);
    maxTokens_ = new QSpinBox(box);
    maxTokens_->setRange(0, 1 << 20);
    maxTokens_->setSpecialValueText(tr("provider's default"));
    maxTokens_->setToolTip(tr("The token limit of each reply. A local model on a CPU needs a "
                              "small one (a few hundred) to answer in seconds."));
    start_ = new QPushButton(tr("Start agent"), box);
    form->addRow(tr("Task"), task_);
    form->addRow(tr("Provider"), provider_);
    form->addRow(tr("Base URL"), baseUrl_);
    form->addRow(tr("Model"), modelName_);
    form->addRow(tr("API key variable"), apiKeyEnv_);
    form->addRow(tr("Max turns"), maxTurns_);
    form->addRow(tr("Tokens per reply"), maxTokens_);
    form->addRow(start_);
    const auto providerChanged = [this] {
        const auto kind = static_cast<agent::ProviderKind>(provider_->currentData().toInt());
        const agent::ProviderSettings defaults = agent::ProviderSettings::defaultsFor(kind);
        baseUrl_->setPlaceholderText(QString::fromStdString(defaults.effectiveBaseUrl()));
        apiKeyEnv_->setPlaceholderText(QString::fromStdString(defaults.apiKeyEnv));
        const bool local = kind == agent::ProviderKind::LocalModel;
        // A local model has no endpoint and no key; its "model" is a file.
        baseUrl_->setEnabled(!local);
        apiKeyEnv_->setEnabled(!local);
        const QString typed = modelName_->currentText();
        modelName_->clear();
        // Suggestions only; any model name the server knows, or any model file, can be typed.
        QStringList suggestions;
        if (local) {
            for (const std::string& file : model::packagedModelFiles(projectVenvPythons()))
                suggestions << QString::fromStdString(file);
        } else if (kind == agent::ProviderKind::AnthropicMessages) {
            suggestions = {QStringLiteral("claude-sonnet-4-20250514"),
                           QStringLiteral("claude-opus-4-20250514"),
                           QStringLiteral("claude-3-5-haiku-latest")};
        } else {
            suggestions = {QStringLiteral("gpt-4.1"), QStringLiteral("gpt-4o"),
                           QStringLiteral("gpt-4o-mini")};
        }
        modelName_->addItems(suggestions);
        modelName_->lineEdit()->setPlaceholderText(local ? tr("a GGUF file or model folder")
                                                         : QString());
        // What was typed is kept while it suits the provider: a file for a local model, a name
        // for a server.
        if (!typed.isEmpty() && local == QFileInfo(typed).isAbsolute())
            modelName_->setCurrentText(typed);
    };
    connect(provider_, &QComboBox::currentIndexChanged, this, providerChanged);
    providerChanged();
    connect(start_, &QPushButton::clicked, this, [this] {
        if (task_->text().isEmpty() || modelName_->currentText().isEmpty()) {
            status_->setText(tr("Choose a task and a model first."));
            return;
        }
        if (controller_.start(startRequest()))
            status_->setText(tr("Starting…"));
    });
    return box;
}

agent::AgentLaunch AgentPane::startRequest() const {
    agent::AgentLaunch request;
    const auto kind = static_cast<agent::ProviderKind>(provider_->currentData().toInt());
    request.provider = agent::ProviderSettings::defaultsFor(kind);
    // A local model's form leaves the endpoint and key fields as they were, unused.
    const bool remote = kind != agent::ProviderKind::LocalModel;
    if (remote && !baseUrl_->text().trimmed().isEmpty())
        request.provider.baseUrl = baseUrl_->text().trimmed().toStdString();
    if (remote && !apiKeyEnv_->text().trimmed().isEmpty())
        request.provider.apiKeyEnv = apiKeyEnv_->text().trimmed().toStdString();
    request.provider.model = modelName_->currentText().trimmed().toStdString();
    request.taskPath = task_->text().toStdString();
    request.maxTurns = maxTurns_->value();
    if (maxTokens_->value() > 0)
        request.maxTokens = maxTokens_->value();
    return request;
}

void AgentPane::setProvider(agent::ProviderKind kind, const QString& baseUrl, const QString& model,
                            const QString& apiKeyEnv) {
    provider_->setCurrentIndex(provider_->findData(int(kind)));
    baseUrl_->setText(baseUrl);
    modelName_->setCurrentText(model);
    apiKeyEnv_->setText(apiKeyEnv);
}

void AgentPane::setMaxTurns(int turns) {
    maxTurns_->setValue(turns);
}

void AgentPane::setTaskPath(const QString& path) {
    task_->setText(path);
}

QString AgentPane::taskPath() const {
    return task_->text();
}

void AgentPane::setShown(agent::EpisodeSnapshotPtr episode, Mode mode) {
    mode_ = mode;
    shown_ = std::move(episode);
    model_->setSnapshot(shown_);
    replayBar_->setVisible(mode == Mode::Replay);
    // The form folds away while an episode is read, and is there when nothing is shown.
    startToggle_->setChecked(!shown_);
    refreshStatus();
    emit episodeShown(shown_);
}

void AgentPane::showEpisode(agent::EpisodeSnapshotPtr episode) {
    replaySource_.reset();
    setShown(std::move(episode), Mode::Stored);
}

void AgentPane::onLiveUpdate(agent::EpisodeSnapshotPtr episode) {
    // Opening or replaying a stored episode detaches the pane from the live one until the
    // next session starts.
    if (mode_ != Mode::Live && mode_ != Mode::Empty)
        return;
    // Follow the newest step unless the user scrolled back to read.
    const QScrollBar* bar = view_->verticalScrollBar();
    const bool atEnd = bar->value() >= bar->maximum() - 4;
    setShown(std::move(episode), Mode::Live);
    if (atEnd)
        view_->scrollToBottom();
}

void AgentPane::startReplay(agent::EpisodeSnapshotPtr episode) {
    replaySource_ = std::move(episode);
    replayPosition_ = -1;
    const int length = replaySource_ ? static_cast<int>(replaySource_->events.size()) : 0;
    replaySlider_->setRange(0, length);
    replayTo(length > 0 ? 1 : 0);
}

void AgentPane::replayTo(int eventCount) {
    if (!replaySource_)
        return;
    const int length = static_cast<int>(replaySource_->events.size());
    eventCount = std::clamp(eventCount, 0, length);
    if (eventCount == replayPosition_)
        return;
    replayPosition_ = eventCount;
    replaySlider_->setValue(eventCount);
    replayLabel_->setText(tr("step %1 of %2").arg(eventCount).arg(length));
    setShown(agent::truncatedTo(replaySource_, static_cast<std::size_t>(eventCount)), Mode::Replay);
    view_->scrollToBottom();
}

void AgentPane::selectStep(qint64 episodeId, qint64 sequence) {
    if (!shown_ || shown_->record.id != episodeId)
        return;
    if (mode_ == Mode::Replay && model_->rowForSequence(sequence) < 0 && replaySource_) {
        for (std::size_t i = 0; i < replaySource_->events.size(); ++i)
            if (replaySource_->events[i]->sequence == sequence)
                replayTo(static_cast<int>(i) + 1);
    }
    const int row = model_->rowForSequence(sequence);
    if (row < 0)
        return;
    const QModelIndex index = model_->index(row);
    view_->setCurrentIndex(index);
    view_->scrollTo(index, QAbstractItemView::PositionAtCenter);
}

void AgentPane::sendMessage() {
    const QString text = message_->text().trimmed();
    if (text.isEmpty())
        return;
    if (!controller_.isRunning()) {
        status_->setText(tr("No agent is running; start one to send it messages."));
        return;
    }
    controller_.sendMessage(
        text, static_cast<agent::SteeringController::Mode>(messageMode_->currentData().toInt()));
    message_->clear();
}

void AgentPane::forkFromSelection() {
    const QModelIndex current = view_->currentIndex();
    if (!shown_ || !current.isValid())
        return;
    agent::AgentLaunch request = startRequest();
    request.taskPath = shown_->record.task;
    const qint64 step = current.data(ConversationModel::SequenceRole).toLongLong();
    if (controller_.fork(shown_->record.id, step, request))
        status_->setText(tr("Forking episode %1 at step %2…").arg(shown_->record.id).arg(step));
}

QString AgentPane::statusText() const {
    return status_->text();
}

QString AgentPane::metersText() const {
    return meters_->text();
}

QString AgentPane::liveReplyText() const {
    return liveReply_->toPlainText();
}

void AgentPane::refreshStatus() {
    const bool running = controller_.isRunning();
    const bool live = running && mode_ == Mode::Live;
    // Resume only means something to a paused agent, Pause to one that is not.
    const bool paused = running && controller_.agentState() == agent::AgentState::Paused;
    const bool pausing = running && controller_.pausePending();
    pause_->setEnabled(running && !paused && !pausing);
    interrupt_->setEnabled(running && !paused);
    resume_->setEnabled(paused);
    stop_->setEnabled(running);
    send_->setEnabled(running);
    start_->setEnabled(!running);
    fork_->setEnabled(!running && shown_ && view_->currentIndex().isValid());

    if (!shown_) {
        header_->setText(tr("No agent session. Start one below, or open an episode in the Runs "
                            "browser."));
        status_->setText(running ? tr("Starting…") : tr("Idle"));
        meters_->clear();
        return;
    }
    const agent::EpisodeRecord& r = shown_->record;
    const QString modeText = mode_ == Mode::Replay   ? tr(" · replay")
                             : mode_ == Mode::Stored ? tr(" · stored")
                                                     : QString();
    header_->setText(tr("Episode %1 · %2 · %3%4")
                         .arg(r.id)
                         .arg(QFileInfo(QString::fromStdString(r.task)).fileName(),
                              QString::fromStdString(r.model), modeText));
    QString status;
    if (live) {
        switch (controller_.agentState()) {
        case AgentState::Thinking:
            status = tr("Thinking…");
            break;
        case AgentState::Tool:
            status = tr("Running tool %1…").arg(lastToolName(*shown_));
            break;
        case AgentState::Evaluating:
            status = tr("Final evaluation (compile, verify, profile)…");
            break;
        case AgentState::Paused:
            status = tr("Paused");
            break;
        case AgentState::Running:
            status = tr("Running");
            break;
        case AgentState::Stopped:
            status = tr("Stopping…");
            break;
        }
        if (pausing)
            status = tr("Pausing after this step (%1; Interrupt pauses now)").arg(status);
        if (const QString stuck = stuckNote(*shown_); !stuck.isEmpty())
            status += QStringLiteral(" · ") + stuck;
    } else {
        switch (r.status) {
        case agent::EpisodeStatus::Running:
            status = tr("Running (in another process or not finished)");
            break;
        case agent::EpisodeStatus::Finished:
            status = r.reward ? tr("Finished · reward %1").arg(*r.reward) : tr("Finished");
            break;
        case agent::EpisodeStatus::Failed:
            status = tr("Failed: %1").arg(lastError(*shown_));
            break;
        case agent::EpisodeStatus::Stopped:
            status = tr("Stopped");
            break;
        case agent::EpisodeStatus::Cancelled:
            status = tr("Cancelled");
            break;
        case agent::EpisodeStatus::InfrastructureError:
            status = tr("Infrastructure error (no reward): %1").arg(lastError(*shown_));
            break;
        }
    }
    status_->setText(status);
    const std::int64_t budget = r.settings.value("context_token_budget", std::int64_t(0));
    const QString context =
        budget > 0
            ? tr("context ≈ %1 / %2").arg(tokens(estimatedContextTokens(*shown_)), tokens(budget))
            : tr("context ≈ %1").arg(tokens(estimatedContextTokens(*shown_)));
    meters_->setText(tr("tokens in %1 · out %2 · cached %3 · %4 · cost %5")
                         .arg(tokens(r.usage.inputTokens), tokens(r.usage.outputTokens),
                              r.usage.cachedInputTokens ? tokens(*r.usage.cachedInputTokens)
                                                        : QStringLiteral("n/a"),
                              context, QString::fromStdString(agent::costText(r.usage, r.model))));
}

} // namespace kwb::ui
