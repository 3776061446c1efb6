#pragma once

#include "agent/session/steering.h"
#include "agent/store/episode_snapshot.h"
#include "widgets/core/agent_session_controller.h"

#include <QWidget>

class QAction;
class QComboBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QListView;
class QPlainTextEdit;
class QPushButton;
class QSlider;
class QSpinBox;
class QToolButton;

namespace kwb::ui {

class ConversationModel;

// The agent pane: the conversation of one episode (live, opened from the store, or replayed
// step by step), what the agent is doing, the steering buttons, the message box, fork, the
// token / context / cost meters, and the form that starts an episode with a provider and model.
class AgentPane : public QWidget {
    Q_OBJECT
public:
    enum class Mode { Empty, Live, Stored, Replay };

    explicit AgentPane(AgentSessionController& controller, QWidget* parent = nullptr);

    void showEpisode(agent::EpisodeSnapshotPtr episode); // a stored episode, as it is now
    void startReplay(agent::EpisodeSnapshotPtr episode); // from its first event
    void replayTo(int eventCount);
    void replayStep(int delta) { replayTo(replayPosition_ + delta); }
    int replayPosition() const { return replayPosition_; }
    void setTaskPath(const QString& path);
    QString taskPath() const; // the task a session started now works on
    // Selects the step's row when this episode is shown (linked selection).
    void selectStep(qint64 episodeId, qint64 sequence);

    agent::AgentLaunch startRequest() const;
    void setProvider(agent::ProviderKind kind, const QString& baseUrl, const QString& model,
                     const QString& apiKeyEnv = {});
    void setMaxTurns(int turns);

    Mode mode() const { return mode_; }
    agent::EpisodeSnapshotPtr shownEpisode() const { return shown_; }
    ConversationModel* conversationModel() const { return model_; }
    QListView* conversationView() const { return view_; }
    QString statusText() const;
    QString metersText() const;
    // The model's reply streamed so far in this turn (empty between turns).
    QString liveReplyText() const;
    QAction* pauseAction() const { return pause_; }
    QAction* interruptAction() const { return interrupt_; }
    QAction* resumeAction() const { return resume_; }
    QAction* stopAction() const { return stop_; }
    QPushButton* startButton() const { return start_; }
    QPushButton* forkButton() const { return fork_; }
    QLineEdit* messageBox() const { return message_; }
    QComboBox* messageMode() const { return messageMode_; }

signals:
    // The episode now shown changed (a new one, or a new state of it): the rewards pane follows.
    void episodeShown(kwb::agent::EpisodeSnapshotPtr episode);
    void stepSelected(qint64 episodeId, qint64 stepIndex);
    void message(const QString& text, bool problem); // for the log

private:
    QWidget* buildStartForm();
    QWidget* buildSteeringBar();
    void setShown(agent::EpisodeSnapshotPtr episode, Mode mode);
    void onLiveUpdate(agent::EpisodeSnapshotPtr episode);
    void sendMessage();
    void forkFromSelection();
    void refreshStatus();

    AgentSessionController& controller_;
    ConversationModel* model_;
    QListView* view_;
    QLabel* header_;
    QLabel* status_;
    QLabel* meters_;
    QPlainTextEdit* liveReply_; // the model's reply while it streams
    QAction* pause_;
    QAction* interrupt_;
    QAction* resume_;
    QAction* stop_;
    QPushButton* fork_;
    QLineEdit* message_;
    QComboBox* messageMode_;
    QPushButton* send_;
    QWidget* replayBar_;
    QSlider* replaySlider_;
    QLabel* replayLabel_;
    QLineEdit* task_;
    QComboBox* provider_;
    QLineEdit* baseUrl_;
    QComboBox* modelName_;
    QLineEdit* apiKeyEnv_;
    QSpinBox* maxTurns_;
    QSpinBox* maxTokens_;
    QPushButton* start_;
    QGroupBox* startForm_;
    QToolButton* startToggle_;

    Mode mode_ = Mode::Empty;
    agent::EpisodeSnapshotPtr shown_;
    agent::EpisodeSnapshotPtr replaySource_;
    int replayPosition_ = 0;
};

} // namespace kwb::ui
