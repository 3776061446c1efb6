#pragma once

#include "agent/store/episode_snapshot.h"
#include "widgets/models/conversation_item.h"

#include <QAbstractListModel>
#include <vector>

namespace kwb::ui {

// The agent conversation as a list, one row per stored event, over immutable episode
// snapshots. A snapshot that extends the one shown (a live episode, or a replay stepping
// forward) inserts rows; one that is a prefix of it (a replay stepping back) removes rows;
// anything else resets. Rows keep whether the user unfolded them while the episode grows.
class ConversationModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Role {
        KindRole = Qt::UserRole + 1, // ConversationItemKind as int
        SequenceRole,                // the event's sequence number (the step)
        TitleRole,
        BodyRole,
        FoldableRole,
        ExpandedRole, // settable: unfolds a foldable row
        ProblemRole,
        HasEvaluationRole,
        VerdictRole,
        RewardRole,
        SpeedupVsEagerRole,
        SpeedupVsCompileRole,
        FlagsRole, // QStringList
    };

    explicit ConversationModel(QObject* parent = nullptr);

    void setSnapshot(agent::EpisodeSnapshotPtr snapshot);
    agent::EpisodeSnapshotPtr snapshot() const { return snapshot_; }
    void clear();

    // The row of the event with this sequence number, or -1.
    int rowForSequence(qint64 sequence) const;
    void toggleExpanded(const QModelIndex& index);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QHash<int, QByteArray> roleNames() const override;

private:
    struct Row {
        ConversationItem item;
        bool expanded = false;
    };
    bool sharesPrefix(const agent::EpisodeSnapshot& next, std::size_t count) const;

    agent::EpisodeSnapshotPtr snapshot_;
    std::vector<Row> rows_;
};

} // namespace kwb::ui
