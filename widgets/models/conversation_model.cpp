#include "widgets/models/conversation_model.h"

#include <QStringList>

namespace kwb::ui {

ConversationModel::ConversationModel(QObject* parent) : QAbstractListModel(parent) {}

bool ConversationModel::sharesPrefix(const agent::EpisodeSnapshot& next, std::size_t count) const {
    if (!snapshot_ || snapshot_->record.id != next.record.id)
        return false;
    // Events are immutable and shared between snapshots of one episode, so the same pointer at
    // the end of the common part means the same history (a reload compares sequences instead).
    for (std::size_t i = count; i-- > 0;) {
        const auto& a = snapshot_->events[i];
        const auto& b = next.events[i];
        if (a != b && a->sequence != b->sequence)
            return false;
        if (a == b)
            return true;
    }
    return true;
}

void ConversationModel::setSnapshot(agent::EpisodeSnapshotPtr snapshot) {
    if (!snapshot) {
        clear();
        return;
    }
    const std::size_t have = rows_.size();
    const std::size_t want = snapshot->events.size();
    if (snapshot_ && sharesPrefix(*snapshot, std::min(have, want))) {
        if (want > have) {
            beginInsertRows({}, static_cast<int>(have), static_cast<int>(want) - 1);
            snapshot_ = std::move(snapshot);
            for (std::size_t i = have; i < want; ++i)
                rows_.push_back({conversationItemFor(*snapshot_->events[i]), false});
            endInsertRows();
        } else if (want < have) {
            beginRemoveRows({}, static_cast<int>(want), static_cast<int>(have) - 1);
            snapshot_ = std::move(snapshot);
            rows_.resize(want);
            endRemoveRows();
        } else {
            snapshot_ = std::move(snapshot);
        }
        return;
    }
    beginResetModel();
    snapshot_ = std::move(snapshot);
    rows_.clear();
    rows_.reserve(want);
    for (const auto& event : snapshot_->events)
        rows_.push_back({conversationItemFor(*event), false});
    endResetModel();
}

void ConversationModel::clear() {
    beginResetModel();
    snapshot_.reset();
    rows_.clear();
    endResetModel();
}

int ConversationModel::rowForSequence(qint64 sequence) const {
    for (std::size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].item.sequence == sequence)
            return static_cast<int>(i);
    return -1;
}

void ConversationModel::toggleExpanded(const QModelIndex& index) {
    if (index.isValid())
        setData(index, !index.data(ExpandedRole).toBool(), ExpandedRole);
}

int ConversationModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ConversationModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& row = rows_[static_cast<std::size_t>(index.row())];
    const ConversationItem& item = row.item;
    const auto& card = item.evaluation;
    switch (role) {
    case Qt::DisplayRole:
    case TitleRole:
        return QString::fromStdString(item.title);
    case Qt::ToolTipRole:
        return item.foldable ? tr("Step %1. Click to %2.")
                                   .arg(item.sequence)
                                   .arg(row.expanded ? tr("fold") : tr("unfold"))
                             : tr("Step %1").arg(item.sequence);
    case KindRole:
        return static_cast<int>(item.kind);
    case SequenceRole:
        return QVariant::fromValue<qint64>(item.sequence);
    case BodyRole:
        return QString::fromStdString(item.body);
    case FoldableRole:
        return item.foldable;
    case ExpandedRole:
        return !item.foldable || row.expanded;
    case ProblemRole:
        return item.problem;
    case HasEvaluationRole:
        return card.has_value();
    case VerdictRole:
        return card ? QString::fromStdString(card->verdict) : QVariant();
    case RewardRole:
        return card ? QVariant(card->reward) : QVariant();
    case SpeedupVsEagerRole:
        return card ? QVariant(card->speedupVsEager) : QVariant();
    case SpeedupVsCompileRole:
        return card ? QVariant(card->speedupVsCompile) : QVariant();
    case FlagsRole: {
        if (!card)
            return {};
        QStringList flags;
        for (const auto& flag : card->flags)
            flags << QString::fromStdString(flag);
        return flags;
    }
    default:
        return {};
    }
}

bool ConversationModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != ExpandedRole ||
        !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return false;
    Row& row = rows_[static_cast<std::size_t>(index.row())];
    if (!row.item.foldable || row.expanded == value.toBool())
        return false;
    row.expanded = value.toBool();
    emit dataChanged(index, index, {ExpandedRole, Qt::ToolTipRole});
    return true;
}

Qt::ItemFlags ConversationModel::flags(const QModelIndex& index) const {
    return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren
                           : Qt::NoItemFlags;
}

QHash<int, QByteArray> ConversationModel::roleNames() const {
    QHash<int, QByteArray> names = QAbstractListModel::roleNames();
    names.insert(TitleRole, "title");
    names.insert(BodyRole, "body");
    names.insert(SequenceRole, "sequence");
    names.insert(ExpandedRole, "expanded");
    return names;
}

} // namespace kwb::ui
