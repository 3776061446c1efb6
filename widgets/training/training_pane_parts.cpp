#include "widgets/training/training_pane_parts.h"

#include <QCoreApplication>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>

namespace kwb::ui {

RewardPlot* stepPlot(QWidget* parent, const QString& title, const QString& yLabel,
                     const QString& emptyText) {
    auto* plot = new RewardPlot(parent);
    plot->setTitle(title);
    plot->setAxisLabels(QCoreApplication::translate("TrainingCurves", "step"), yLabel);
    plot->setEmptyText(emptyText);
    return plot;
}

QScrollArea* scrolled(QWidget* parent, QWidget* content) {
    auto* scroll = new QScrollArea(parent);
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    return scroll;
}

QWidget* settingsBesideResults(QWidget* parent, QWidget* settings, QWidget* results,
                               int settingsWidth) {
    QScrollArea* settingsScroll = scrolled(parent, settings);
    settingsScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* splitter = new QSplitter(Qt::Horizontal, parent);
    splitter->addWidget(settingsScroll);
    splitter->addWidget(results);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({settingsWidth, 900});
    return splitter;
}

} // namespace kwb::ui
