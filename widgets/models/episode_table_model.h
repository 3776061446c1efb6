#pragma once

#include "agent/store/episode_record.h"

#include <QAbstractTableModel>
#include <algorithm>
#include <vector>

namespace kwb::ui {

// Episode records as the rows of a table, in the order a subclass gives (above()). A refreshed
// listing is merged row by row and a live record replaces its row in place, so selections and
// scroll positions survive both. Subclasses say what the columns show.
class EpisodeTableModel : public QAbstractTableModel {
public:
    using QAbstractTableModel::QAbstractTableModel;

    void setEpisodes(const std::vector<agent::EpisodeRecord>& episodes) {
        for (int row = rowCount() - 1; row >= 0; --row) {
            const agent::EpisodeId id = rows_[std::size_t(row)].id;
            if (std::none_of(episodes.begin(), episodes.end(),
                             [id](const auto& e) { return e.id == id; }))
                remove(id);
        }
        for (const agent::EpisodeRecord& episode : episodes)
            upsert(episode);
    }

    void upsert(const agent::EpisodeRecord& episode) {
        if (const int row = rowOf(episode.id); row >= 0) {
            if (rows_[std::size_t(row)] == episode)
                return;
            rows_[std::size_t(row)] = episode;
            emit dataChanged(index(row, 0), index(row, columnCount() - 1));
            return;
        }
        const auto at = std::find_if(rows_.begin(), rows_.end(),
                                     [&](const auto& e) { return above(episode, e); });
        const int row = static_cast<int>(at - rows_.begin());
        beginInsertRows({}, row, row);
        rows_.insert(at, episode);
        endInsertRows();
    }

    void remove(agent::EpisodeId id) {
        if (const int row = rowOf(id); row >= 0) {
            beginRemoveRows({}, row, row);
            rows_.erase(rows_.begin() + row);
            endRemoveRows();
        }
    }

    void clear() {
        if (rows_.empty())
            return;
        beginResetModel();
        rows_.clear();
        endResetModel();
    }

    int rowOf(agent::EpisodeId id) const {
        for (std::size_t i = 0; i < rows_.size(); ++i)
            if (rows_[i].id == id)
                return static_cast<int>(i);
        return -1;
    }
    const agent::EpisodeRecord& episodeAt(int row) const { return rows_.at(std::size_t(row)); }

    int rowCount(const QModelIndex& parent = {}) const override {
        return parent.isValid() ? 0 : static_cast<int>(rows_.size());
    }

protected:
    // Whether `a` belongs above `b`.
    virtual bool above(const agent::EpisodeRecord& a, const agent::EpisodeRecord& b) const = 0;

    std::vector<agent::EpisodeRecord> rows_;
};

} // namespace kwb::ui
