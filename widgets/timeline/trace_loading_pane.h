#pragma once

#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;

namespace kwb::ui {

// What the timeline dock shows while a trace file loads on the engine thread: which file, how
// far (bytes read of its size), and a Cancel button.
class TraceLoadingPane : public QWidget {
    Q_OBJECT
public:
    explicit TraceLoadingPane(QWidget* parent = nullptr);

    void start(const QString& fileName);
    void setProgress(qint64 done, qint64 total);

    QString text() const;
    int permille() const;
    QPushButton* cancelButton() const { return cancel_; }

signals:
    void cancelRequested();

private:
    QLabel* label_;
    QProgressBar* bar_;
    QPushButton* cancel_;
    QString fileName_;
};

} // namespace kwb::ui
