#include "widgets/runs/reward_histogram.h"

#include <QPainter>
#include <algorithm>

namespace kwb::ui {

namespace {

// The milestone rewards always get a slot, so bars keep their place as counts arrive.
constexpr int kRewards[] = {-1, 1, 2, 3};
constexpr double kMargin = 8.0;
constexpr double kLabelHeight = 18.0;

} // namespace

RewardHistogram::RewardHistogram(QWidget* parent)
    : QWidget(parent),
      emptyText_(tr("No scored episode yet: the reward distribution appears here.")) {
    setToolTip(tr("Final rewards of the scored episodes: -1 failed or rejected, 1 correct, "
                  "2 faster than eager, 3 faster than torch.compile as well."));
}

void RewardHistogram::setEmptyText(const QString& text) {
    emptyText_ = text;
    update();
}

void RewardHistogram::setCounts(const std::map<int, int>& counts) {
    if (counts == counts_)
        return;
    counts_ = counts;
    update();
}

int RewardHistogram::total() const {
    int sum = 0;
    for (const auto& [reward, count] : counts_)
        sum += count;
    return sum;
}

QRectF RewardHistogram::barRect(int reward) const {
    const auto found = counts_.find(reward);
    const int count = found == counts_.end() ? 0 : found->second;
    int most = 0;
    for (const auto& [r, c] : counts_)
        most = std::max(most, c);
    const auto slot = std::find(std::begin(kRewards), std::end(kRewards), reward);
    if (count == 0 || most == 0 || slot == std::end(kRewards))
        return {};
    const double width = (this->width() - 2 * kMargin) / std::size(kRewards);
    const double plotTop = kMargin + kLabelHeight; // room for the count above the tallest bar
    const double plotBottom = height() - kMargin - kLabelHeight;
    const double barHeight = (plotBottom - plotTop) * count / most;
    const double left = kMargin + width * double(slot - std::begin(kRewards));
    return {left + width * 0.15, plotBottom - barHeight, width * 0.7, barHeight};
}

void RewardHistogram::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    const int sum = total();
    if (sum == 0) {
        painter.setPen(pal.color(QPalette::PlaceholderText));
        painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, emptyText_);
        return;
    }
    const double width = (this->width() - 2 * kMargin) / std::size(kRewards);
    for (std::size_t i = 0; i < std::size(kRewards); ++i) {
        const int reward = kRewards[i];
        const QRectF slot(kMargin + width * double(i), height() - kMargin - kLabelHeight, width,
                          kLabelHeight);
        painter.setPen(pal.color(QPalette::Text));
        painter.drawText(slot, Qt::AlignCenter,
                         reward > 0 ? QStringLiteral("+%1").arg(reward) : QString::number(reward));
        const QRectF bar = barRect(reward);
        if (bar.isEmpty())
            continue;
        // Failures in red: it reads as "rejected" in both themes.
        const QColor fill = reward < 0 ? QColor(0xd0, 0x4a, 0x3c) : pal.color(QPalette::Highlight);
        painter.fillRect(bar, fill);
        const int count = counts_.at(reward);
        painter.drawText(
            QRectF(bar.left() - width * 0.15, bar.top() - kLabelHeight, width, kLabelHeight),
            Qt::AlignCenter,
            QStringLiteral("%1 (%2%)").arg(count).arg(100.0 * count / sum, 0, 'f', 0));
    }
}

} // namespace kwb::ui
