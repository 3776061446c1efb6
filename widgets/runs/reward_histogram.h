#pragma once

#include <QString>
#include <QWidget>
#include <map>

namespace kwb::ui {

// The distribution of a run's milestone rewards (-1, 1, 2, 3): one bar per reward with its
// count and share, drawn with QPainter in the palette's colours. Empty, it says so.
class RewardHistogram : public QWidget {
    Q_OBJECT
public:
    explicit RewardHistogram(QWidget* parent = nullptr);

    // reward -> scored episodes (agent::MetricsGroup::rewardCounts)
    void setCounts(const std::map<int, int>& counts);
    // What an empty histogram says (by default: no scored episode yet).
    void setEmptyText(const QString& text);
    const QString& emptyText() const { return emptyText_; }
    const std::map<int, int>& counts() const { return counts_; }
    int total() const;
    // The bar of `reward` in widget coordinates (empty when it has no bar).
    QRectF barRect(int reward) const;

    QSize sizeHint() const override { return {320, 160}; }
    QSize minimumSizeHint() const override { return {120, 60}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::map<int, int> counts_;
    QString emptyText_;
};

} // namespace kwb::ui
