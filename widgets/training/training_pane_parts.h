#pragma once

#include "widgets/runs/reward_plot.h"

#include <QColor>
#include <QString>

class QScrollArea;
class QWidget;

namespace kwb::ui {

// What the Training and Kernel Tuning panes build alike: their curves of training steps, the
// colours of a policy update's figures (so that a curve reads the same in both), and the layout
// of settings that scroll beside the results.

// The colour of each training figure that both panes draw.
struct TrainingCurveColours {
    static QColor loss() { return QColor(0x3b, 0x82, 0xf6); }
    static QColor secondary() {
        return QColor(0xf5, 0x9e, 0x0b);
    } // value loss, faster than compile
    static QColor reward() { return QColor(0x10, 0xb9, 0x81); }
    static QColor kl() { return QColor(0xef, 0x44, 0x44); }
    static QColor entropy() { return QColor(0x8b, 0x5c, 0xf6); }
    static QColor clip() { return QColor(0x64, 0x74, 0x8b); }
    static QColor tokens() { return QColor(0x0e, 0xa5, 0xe9); }
};

// A plot of one figure per training step.
RewardPlot* stepPlot(QWidget* parent, const QString& title, const QString& yLabel,
                     const QString& emptyText);

// `settings` in a scroll area beside `results`, split so that the results take the width: the
// pane fits a small screen and never raises the bottom docks' minimum height with what it shows.
QWidget* settingsBesideResults(QWidget* parent, QWidget* settings, QWidget* results,
                               int settingsWidth);

// `content` in a frameless scroll area that resizes it to the width.
QScrollArea* scrolled(QWidget* parent, QWidget* content);

} // namespace kwb::ui
