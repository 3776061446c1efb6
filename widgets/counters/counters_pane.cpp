#include "widgets/counters/counters_pane.h"

#include "engine/counters/roofline.h"
#include "widgets/core/engine_bridge.h"
#include "widgets/counters/collect_counters_dialog.h"
#include "widgets/counters/counters_kernel_model.h"
#include "widgets/counters/roofline_chart.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace kwb::ui {
namespace {

using kwb::counters::KernelCounters;

QString valueText(const kwb::counters::MetricValue& v) {
    return QString::fromStdString(v.display());
}

std::optional<kwb::counters::RooflinePoint> fp32(const KernelCounters* k) {
    if (!k)
        return std::nullopt;
    for (const auto& p : kwb::counters::rooflinePoints(*k))
        if (p.precision == "FP32")
            return p;
    return std::nullopt;
}

QString filesOf(const kwb::counters::LoadedCounters& c) {
    QString text = QFileInfo(QString::fromStdString(c.detailsPath)).fileName();
    if (!c.rawPath.empty())
        text += " + " + QFileInfo(QString::fromStdString(c.rawPath)).fileName();
    return text;
}

} // namespace

CountersPane::CountersPane(EngineBridge* bridge, QWidget* parent)
    : QWidget(parent), bridge_(bridge), model_(new CountersKernelModel(this)),
      table_(new QTableView(this)), chart_(new RooflineChart(this)),
      details_(new QTreeWidget(this)), status_(new QLabel(this)), hint_(new QLabel(this)),
      compareButton_(new QPushButton(tr("Compare with…"), this)),
      clearButton_(new QPushButton(tr("Clear comparison"), this)),
      collectButton_(new QPushButton(tr("Collect…"), this)) {
    auto* open = new QPushButton(tr("Open ncu CSV…"), this);
    open->setToolTip(tr("ncu's details page (--csv --page details) and, for the roofline, its "
                        "raw page (--csv --page raw)"));
    compareButton_->setToolTip(tr("Another run's pages, to compare the kernels with"));
    compareButton_->setEnabled(false);
    clearButton_->setEnabled(false);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    collectButton_->setToolTip(tr("Run the open workspace's profile stage under Nsight Compute"));
    setCollectPossible(false, tr("Looking for a GPU…"));
    connect(collectButton_, &QPushButton::clicked, this, [this] {
        CollectCountersDialog dialog(tr("the open workspace"), kernelHint_, this);
        if (dialog.exec() == QDialog::Accepted)
            emit collectRequested(dialog.choice());
    });
    auto* bar = new QHBoxLayout;
    bar->addWidget(collectButton_);
    bar->addWidget(open);
    bar->addWidget(compareButton_);
    bar->addWidget(clearButton_);
    bar->addWidget(status_, 1);

    hint_->setWordWrap(true);
    hint_->setTextFormat(Qt::PlainText);
    hint_->setText(
        tr("Hardware counters come from Nsight Compute, which needs a CUDA GPU to collect them; "
           "reading them needs none. With a GPU here, Collect… runs the open workspace's profile "
           "stage under ncu with the sections you choose (kwb eval WS --counters does the same "
           "headless). On another GPU host:\n"
           "  ncu --section SpeedOfLight --section SpeedOfLight_RooflineChart "
           "--section MemoryWorkloadAnalysis --section Occupancy --export run python3 SCRIPT\n"
           "  ncu --import run.ncu-rep --csv --page details > details.csv\n"
           "  ncu --import run.ncu-rep --csv --page raw > raw.csv\n"
           "then open both files here (kwb counters reads them too)."));

    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->hide();
    table_->setWordWrap(false);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setColumnWidth(CountersKernelModel::Kernel, 260);
    details_->setColumnCount(3);
    details_->setHeaderLabels({tr("Metric"), tr("Value"), tr("Baseline")});
    details_->setColumnHidden(2, true);
    details_->header()->setSectionResizeMode(QHeaderView::Interactive);
    details_->setColumnWidth(0, 230);

    // Kernels above their details on the left, the roofline beside them at full height: the
    // bottom dock is short on small screens, and a chart squeezed under a table says nothing.
    auto* left = new QSplitter(Qt::Vertical, this);
    left->addWidget(table_);
    left->addWidget(details_);
    left->setStretchFactor(0, 1);
    left->setStretchFactor(1, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(left);
    split->addWidget(chart_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    // The hint and the report take turns in one place, in scroll areas and splitters that ask
    // for little height: the pane shares a dock tab group and must not set the group's minimum.
    auto* hintArea = new QScrollArea(this);
    hintArea->setWidget(hint_);
    hintArea->setWidgetResizable(true);
    hintArea->setFrameShape(QFrame::NoFrame);
    pages_ = new QStackedWidget(this);
    pages_->addWidget(hintArea);
    pages_->addWidget(split);
    table_->setMinimumHeight(40);
    details_->setMinimumHeight(40);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(pages_, 1);

    connect(open, &QPushButton::clicked, this, [this] { chooseFiles(QStringLiteral("current")); });
    connect(compareButton_, &QPushButton::clicked, this,
            [this] { chooseFiles(QStringLiteral("baseline")); });
    connect(clearButton_, &QPushButton::clicked, this, &CountersPane::clearBaseline);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& index) { showKernel(index.row()); });
    connect(model_, &QAbstractItemModel::modelReset, this, [this] {
        refreshChart();
        if (model_->rowCount() > 0)
            table_->selectRow(0);
        else
            showKernel(-1);
    });
    connect(chart_, &RooflineChart::kernelClicked, this, [this](int id) {
        for (int row = 0; row < model_->rowCount(); ++row)
            if (model_->kernelAt(row)->id == id)
                table_->selectRow(row);
    });
    connect(bridge_, &EngineBridge::countersLoaded, this, &CountersPane::onLoaded);
    updateStatus();
}

void CountersPane::chooseFiles(const QString& purpose) {
    const QStringList files = QFileDialog::getOpenFileNames(
        this,
        purpose == QStringLiteral("current") ? tr("Open Nsight Compute CSV")
                                             : tr("Compare with Nsight Compute CSV"),
        QString(), tr("CSV files (*.csv);;All files (*)"));
    if (files.isEmpty())
        return;
    if (purpose == QStringLiteral("current"))
        openReport(files);
    else
        openBaseline(files);
}

void CountersPane::openReport(const QStringList& paths) {
    status_->setText(tr("Reading %1…").arg(paths.join(QStringLiteral(", "))));
    bridge_->requestCounters(paths, QStringLiteral("current"));
}

void CountersPane::openBaseline(const QStringList& paths) {
    status_->setText(tr("Reading %1…").arg(paths.join(QStringLiteral(", "))));
    bridge_->requestCounters(paths, QStringLiteral("baseline"));
}

void CountersPane::clearBaseline() {
    baseline_.reset();
    model_->setBaseline(nullptr);
    updateStatus();
}

void CountersPane::onLoaded(const QString& purpose,
                            const std::shared_ptr<const kwb::counters::LoadedCounters>& loaded) {
    if (!loaded->report) {
        // What was shown stays: a file that cannot be read replaces nothing.
        lastError_ = QString::fromStdString(loaded->error);
        updateStatus();
        emit reportOpened(QString(), lastError_);
        return;
    }
    lastError_.clear();
    if (purpose == QStringLiteral("baseline")) {
        baseline_ = loaded;
        model_->setBaseline(loaded->report);
    } else {
        current_ = loaded;
        model_->setReport(loaded->report);
    }
    updateStatus();
    emit reportOpened(statusText(), QString());
}

void CountersPane::updateStatus() {
    pages_->setCurrentIndex(current_ ? 1 : 0);
    compareButton_->setEnabled(current_ != nullptr);
    clearButton_->setEnabled(baseline_ != nullptr);
    details_->setColumnHidden(2, !baseline_);
    table_->setColumnHidden(CountersKernelModel::VsBaseline, !baseline_);
    QString text;
    if (current_)
        text = tr("%1: %2 kernels").arg(filesOf(*current_)).arg(current_->report->kernels.size());
    if (baseline_)
        text += tr(", compared with %1").arg(filesOf(*baseline_));
    if (!lastError_.isEmpty())
        text =
            (text.isEmpty() ? QString() : text + "  ·  ") + tr("Cannot open: %1").arg(lastError_);
    status_->setText(text);
    status_->setToolTip(text);
}

QString CountersPane::statusText() const {
    return status_->text();
}

void CountersPane::refreshChart() {
    std::vector<RooflineDot> dots;
    for (int row = 0; row < model_->rowCount(); ++row) {
        const auto point = fp32(model_->kernelAt(row));
        if (!point)
            continue;
        dots.push_back({model_->kernelAt(row)->id, *point, fp32(model_->baselineKernelAt(row))});
    }
    chart_->setDots(std::move(dots));
}

void CountersPane::showKernel(int row) {
    details_->clear();
    const KernelCounters* k = model_->kernelAt(row);
    if (!k) {
        chart_->setSelectedId(-1);
        return;
    }
    refreshChart();
    chart_->setSelectedId(k->id);
    const KernelCounters* before = model_->baselineKernelAt(row);
    auto* launch = new QTreeWidgetItem(details_, {tr("Launch")});
    new QTreeWidgetItem(launch, {tr("Kernel"), QString::fromStdString(k->kernelName)});
    new QTreeWidgetItem(launch, {tr("Grid x block"), QString::fromStdString(k->gridSize) + " x " +
                                                         QString::fromStdString(k->blockSize)});
    new QTreeWidgetItem(launch, {tr("Device, compute capability"),
                                 QString::fromStdString(k->device) + ", " +
                                     QString::fromStdString(k->computeCapability)});
    QHash<QString, QTreeWidgetItem*> sections;
    for (const auto& m : k->metrics) {
        const QString name = QString::fromStdString(m.section);
        QTreeWidgetItem*& section = sections[name];
        if (!section)
            section = new QTreeWidgetItem(details_, {name});
        const auto* was = before ? before->metric(m.section, m.name) : nullptr;
        new QTreeWidgetItem(section, {QString::fromStdString(m.name), valueText(m.value),
                                      was ? valueText(was->value) : QString()});
    }
    if (!k->findings.empty()) {
        auto* findings = new QTreeWidgetItem(details_, {tr("ncu's advice")});
        for (const auto& f : k->findings) {
            QString value = QString::fromStdString(f.description);
            if (f.estimatedSpeedup)
                value =
                    tr("est. %1% %2speed-up · ")
                        .arg(*f.estimatedSpeedup, 0, 'f', 1)
                        .arg(f.speedupType.empty() ? QString()
                                                   : QString::fromStdString(f.speedupType) + " ") +
                    value;
            auto* item = new QTreeWidgetItem(
                findings, {QString::fromStdString(f.type + " " + f.rule), value});
            item->setToolTip(1, QString::fromStdString(f.description));
        }
    }
    details_->expandAll();
}

void CountersPane::setCollectPossible(bool possible, const QString& why) {
    collectButton_->setEnabled(possible);
    collectButton_->setToolTip(possible ? tr("Run the open workspace's profile stage under "
                                             "Nsight Compute, with the sections you choose")
                                        : why);
}

void CountersPane::setKernelHint(const QString& kernelName) {
    // ncu matches the function's base name: the part before its parameter or template list.
    QString head = kernelName;
    const qsizetype cut = head.indexOf(QRegularExpression(QStringLiteral("[(<]")));
    if (cut > 0)
        head.truncate(cut);
    head = head.trimmed();
    if (const qsizetype space = head.lastIndexOf(' '); space >= 0)
        head = head.mid(space + 1); // a return type before the name
    // Only the regular expression's own characters are escaped: ncu's matcher is not Qt's, and
    // an identity escape such as "\:" is not valid in every dialect.
    static const QString special = QStringLiteral("\\^$.|?*+()[]{}");
    QString escaped;
    for (const QChar c : head) {
        if (special.contains(c))
            escaped += QLatin1Char('\\');
        escaped += c;
    }
    kernelHint_ = escaped;
}

void CountersPane::showCollecting(const QString& text) {
    status_->setText(text);
}

} // namespace kwb::ui
