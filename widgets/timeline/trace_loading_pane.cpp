#include "widgets/timeline/trace_loading_pane.h"

#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

namespace kwb::ui {

TraceLoadingPane::TraceLoadingPane(QWidget* parent)
    : QWidget(parent), label_(new QLabel(this)), bar_(new QProgressBar(this)),
      cancel_(new QPushButton(tr("Cancel"), this)) {
    label_->setAlignment(Qt::AlignCenter);
    label_->setWordWrap(true);
    // Per mille: a 2 GB file moves the bar every 2 MB.
    bar_->setRange(0, 1000);
    bar_->setTextVisible(false);
    bar_->setMaximumWidth(480);
    cancel_->setToolTip(tr("Stop reading the file (Esc)"));
    cancel_->setShortcut(QKeySequence(Qt::Key_Escape));
    auto* layout = new QVBoxLayout(this);
    layout->addStretch(1);
    layout->addWidget(label_);
    layout->addWidget(bar_, 0, Qt::AlignHCenter);
    layout->addWidget(cancel_, 0, Qt::AlignHCenter);
    layout->addStretch(2);
    connect(cancel_, &QPushButton::clicked, this, &TraceLoadingPane::cancelRequested);
}

void TraceLoadingPane::start(const QString& fileName) {
    fileName_ = fileName;
    bar_->setValue(0);
    label_->setText(tr("Loading %1…").arg(fileName_));
}

void TraceLoadingPane::setProgress(qint64 done, qint64 total) {
    const int permille =
        total > 0 ? static_cast<int>(std::min<qint64>(1000, done * 1000 / total)) : 0;
    bar_->setValue(permille);
    const QLocale locale;
    label_->setText(
        tr("Loading %1… %2 of %3")
            .arg(fileName_, locale.formattedDataSize(done), locale.formattedDataSize(total)));
}

QString TraceLoadingPane::text() const {
    return label_->text();
}

int TraceLoadingPane::permille() const {
    return bar_->value();
}

} // namespace kwb::ui
