// Timeline benchmark: load 1,000,000 synthetic kernel records, then time frames of scripted pan
// and zoom sequences rendered offscreen into a 1920x1080 QImage. Prints a markdown table.
//
//   QT_QPA_PLATFORM=offscreen kwb_timeline_bench [--kernels N] [--frames N] [--width W]
//                                                 [--height H] [--from-file RECORDS]
//                                                 [--parser fastest|nlohmann]
//                                                 [--export-chrome TRACE.json]
//
// --from-file: the load reads a kwb-cupti record file through loadTraceFile, as File > Open
// Trace does (parse included); the synthetic records are written there first when the file does
// not exist yet. The file may also be Chrome trace-event JSON (--export-chrome writes the loaded
// timeline as one, for a second run to load). --parser nlohmann reads with the fallback parser
// (hosts built without simdjson) instead: record lines one by one, Chrome JSON streamed.

#include "engine/timeline/perfetto_export.h"
#include "engine/timeline/record_reader.h"
#include "engine/timeline/timeline_builder.h"
#include "engine/timeline/trace_file.h"
#include "tests/timeline/timeline_fixture.h"
#include "widgets/timeline/timeline_pane.h"
#include "widgets/timeline/timeline_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QPainter>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Options {
    std::size_t kernels = 1'000'000;
    int frames = 240;
    int width = 1920;
    int height = 1080;
    QString screenshot;       // when set: also save pictures of the pane (whole run, one iteration)
    std::string fromFile;     // when set: load through a record file (written first if absent)
    bool nlohmann = false;    // --parser nlohmann: the fallback parser, line by line
    std::string exportChrome; // when set: write the loaded timeline there as Chrome JSON
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--screenshot") {
            o.screenshot = QString::fromLocal8Bit(argv[i + 1]);
            continue;
        }
        if (flag == "--from-file") {
            o.fromFile = argv[i + 1];
            continue;
        }
        if (flag == "--export-chrome") {
            o.exportChrome = argv[i + 1];
            continue;
        }
        if (flag == "--parser") {
            o.nlohmann = std::string(argv[i + 1]) == "nlohmann";
            continue;
        }
        const long value = std::strtol(argv[i + 1], nullptr, 10);
        if (flag == "--kernels")
            o.kernels = static_cast<std::size_t>(value);
        else if (flag == "--frames")
            o.frames = static_cast<int>(value);
        else if (flag == "--width")
            o.width = static_cast<int>(value);
        else if (flag == "--height")
            o.height = static_cast<int>(value);
    }
    return o;
}

double msSince(const QElapsedTimer& timer) {
    return static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(rank));
    const auto hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

long peakRssMiB() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0)
            return std::strtol(line.c_str() + 6, nullptr, 10) / 1024;
    return -1;
}

// CPU time of this thread: the machine is shared, so wall time includes waiting for a core.
double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// The synthetic records as the injection library writes them: header, device, kernels (in
// arrival order) and NVTX ranges as marker pairs, then the end line.
void writeRecordFile(const std::string& path, const kwb::testing::SyntheticRecords& records) {
    std::ofstream out(path, std::ios::binary);
    const std::int64_t origin = 1'700'000'000'000'000'000;
    out << R"({"t":"header","format":"kwb-cupti/1","pid":1})" << '\n'
        << R"({"t":"device","id":0,"name":"NVIDIA H200, synthetic"})" << '\n'
        << R"({"t":"context","ctx":1,"dev":0})" << '\n';
    std::uint32_t correlation = 1;
    for (const auto& k : records.kernels) {
        const auto& launch = records.launchPerName[k.nameId];
        out << R"({"t":"kernel","dev":0,"ctx":1,"stream":)" << k.streamId << R"(,"start":)"
            << origin + k.startNs << R"(,"end":)" << origin + k.endNs << R"(,"grid":[)"
            << launch.grid[0] << ',' << launch.grid[1] << ',' << launch.grid[2] << R"(],"block":[)"
            << launch.block[0] << ',' << launch.block[1] << ',' << launch.block[2] << R"(],"regs":)"
            << launch.registersPerThread << R"(,"ssmem":)" << launch.staticSharedBytes
            << R"(,"dsmem":)" << launch.dynamicSharedBytes << R"(,"lmem":0,"corr":)"
            << correlation++ << R"(,"name":")" << records.names[k.nameId] << "\"}\n";
    }
    std::uint32_t id = 1;
    for (const auto& r : records.ranges) {
        out << R"({"t":"marker","id":)" << id << R"(,"flag":"start","ts":)" << origin + r.startNs
            << R"(,"tid":1,"name":")" << records.names[r.nameId] << R"(","domain":null})" << '\n'
            << R"({"t":"marker","id":)" << id << R"(,"flag":"end","ts":)" << origin + r.endNs
            << R"(,"tid":1,"name":null,"domain":null})" << '\n';
        ++id;
    }
    out << R"({"t":"end","write_failures":0})" << '\n';
}

// The first kilobytes of a file, for telling its format.
std::string fileHead(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string text(4096, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

struct SequenceResult {
    std::string name;
    std::vector<double> frameMs;
    std::vector<double> cpuMs;
    double meanItems = 0.0;
};

// Renders `frames` frames; before each, `step(i)` moves the view. The frame is what a paint
// event costs: QWidget::render into the image, which runs the view's paintEvent. Without the
// window-background pass, as for the opaque widget on screen (Qt::WA_OpaquePaintEvent), whose
// paintEvent covers every pixel itself.
void renderFrame(kwb::ui::TimelineView& view, QImage& image) {
    view.render(&image, QPoint(), QRegion(), QWidget::DrawChildren);
}

SequenceResult runSequence(const std::string& name, kwb::ui::TimelineView& view, QImage& image,
                           int frames, const std::function<void(int)>& step) {
    SequenceResult result{name, {}, {}, 0.0};
    result.frameMs.reserve(static_cast<std::size_t>(frames));
    result.cpuMs.reserve(static_cast<std::size_t>(frames));
    double items = 0.0;
    for (int i = 0; i < frames; ++i) {
        step(i);
        QElapsedTimer timer;
        const double cpu0 = threadCpuMs();
        timer.start();
        renderFrame(view, image);
        result.frameMs.push_back(msSince(timer));
        result.cpuMs.push_back(threadCpuMs() - cpu0);
        items += static_cast<double>(view.lastFrameItemCount());
    }
    result.meanItems = items / frames;
    return result;
}

} // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const Options options = parse(argc, argv);

    kwb::testing::SyntheticSpec spec;
    spec.kernels = options.kernels;
    spec.sideStreams = 3;
    spec.iterationsPerPhase = 1000;
    QElapsedTimer timer;
    timer.start();
    const kwb::testing::SyntheticRecords records = kwb::testing::generateRecords(spec);
    const double generateMs = msSince(timer);

    // Load = building the snapshot (from flat records, or reading the record file) + handing
    // it to the pane + the first frame.
    std::uintmax_t fileBytes = 0;
    if (!options.fromFile.empty() && !std::filesystem::exists(options.fromFile))
        writeRecordFile(options.fromFile, records);
    timer.restart();
    const double loadCpu0 = threadCpuMs();
    kwb::timeline::TimelineSnapshot timeline;
    if (options.fromFile.empty()) {
        timeline = kwb::testing::buildTimeline(records);
    } else if (options.nlohmann && kwb::timeline::detectTraceFormat(fileHead(options.fromFile)) !=
                                       kwb::timeline::TraceFormat::ChromeJson) {
        kwb::timeline::TimelineBuilder builder;
        std::ifstream in(options.fromFile);
        for (std::string line; std::getline(in, line);)
            if (auto record =
                    kwb::timeline::parseRecordLine(line, kwb::timeline::FlatJsonParser::Nlohmann))
                builder.addRecord(*record);
        timeline = builder.finish();
        fileBytes = std::filesystem::file_size(options.fromFile);
    } else {
        const kwb::timeline::LoadedTrace loaded =
            kwb::timeline::loadTraceFile(options.fromFile, {}, {},
                                         options.nlohmann ? kwb::timeline::FlatJsonParser::Nlohmann
                                                          : kwb::timeline::FlatJsonParser::Fastest);
        if (!loaded.timeline) {
            std::fprintf(stderr, "cannot load %s: %s\n", options.fromFile.c_str(),
                         loaded.error.c_str());
            return 1;
        }
        timeline = loaded.timeline;
        fileBytes = loaded.bytes;
    }
    const double buildMs = msSince(timer);
    if (!options.exportChrome.empty())
        kwb::timeline::writePerfettoTraceFile(options.exportChrome, *timeline);

    kwb::ui::TimelinePane pane;
    pane.resize(options.width, options.height);
    timer.restart();
    pane.setTimeline(timeline);
    const double handOffMs = msSince(timer);

    kwb::ui::TimelineView view;
    view.resize(options.width, options.height);
    view.setTimeline(timeline);
    QImage image(options.width, options.height, QImage::Format_ARGB32_Premultiplied);
    timer.restart();
    renderFrame(view, image);
    const double firstFrameMs = msSince(timer);
    const double loadCpuMs = threadCpuMs() - loadCpu0;

    const double extent = view.viewport().extentNs();
    const int frames = options.frames;
    const double plotLeft = view.viewport().plotLeft();
    const double plotWidth = view.viewport().plotWidth();
    std::vector<SequenceResult> results;

    // Two windows a pixel apart, alternating, so every frame folds all 1M kernels afresh.
    results.push_back(
        runSequence("whole run (all 1M visible), fold recomputed", view, image, frames, [&](int i) {
            const double shift = (i % 2) * extent / plotWidth;
            view.setViewRange(shift, extent * 0.999 + shift);
        }));
    // A hover or selection repaint: the window does not move, the folds are reused.
    view.resetZoom();
    results.push_back(runSequence("whole run, repaint in place (hover)", view, image, frames,
                                  [&](int) { view.update(); }));
    results.push_back(runSequence("pan, 1/8 of the run visible", view, image, frames, [&](int i) {
        const double span = extent / 8.0;
        const double t0 = (extent - span) * (0.5 + 0.5 * std::sin(i * 0.05));
        view.setViewRange(t0, t0 + span);
    }));
    results.push_back(runSequence("pan, 2 ms visible", view, image, frames, [&](int i) {
        const double span = 2e6;
        const double t0 = extent * 0.3 + i * span * 0.03;
        view.setViewRange(t0, t0 + span);
    }));
    view.resetZoom();
    // Real wheel events: zoom at the cursor plus the hover hit test that follows each step.
    results.push_back(
        runSequence("wheel zoom in then out at a moving cursor", view, image, frames, [&](int i) {
            const QPointF cursor(plotLeft + plotWidth * (0.2 + 0.6 * (i % 97) / 97.0),
                                 options.height * 0.5);
            const bool in = (i / 60) % 2 == 0; // 60 steps of 1.25x in (~6e5x), then out
            QWheelEvent wheel(cursor, view.mapToGlobal(cursor), QPoint(),
                              QPoint(0, in ? 120 : -120), Qt::NoButton, Qt::NoModifier,
                              Qt::NoScrollPhase, false);
            QApplication::sendEvent(&view, &wheel);
        }));

    if (!options.screenshot.isEmpty()) {
        pane.resize(1600, 640);
        QString overview = options.screenshot;
        overview.replace(QStringLiteral(".png"), QStringLiteral("-overview.png"));
        pane.view()->resetZoom();
        pane.grab().save(overview);
        const auto& iterations = timeline->ranges.at(0).events;
        const auto& iteration = iterations[iterations.size() / 2];
        pane.showTimeRange(iteration.startNs, iteration.endNs + 20'000);
        pane.selectKernel(0, static_cast<quint32>(timeline->streams[0].events.size() / 2));
        pane.showTimeRange(iteration.startNs - 50'000, iteration.endNs + 50'000);
        pane.grab().save(options.screenshot);
    }

    std::printf("# Timeline benchmark\n\n");
    std::printf("%zu kernels on %zu streams, %zu NVTX ranges, span %.3f s, %dx%d, %d frames per "
                "sequence; peak RSS %ld MiB.\n\n",
                timeline->kernelCount, timeline->streams.size(),
                timeline->ranges.empty() ? std::size_t{0} : timeline->ranges[0].events.size(),
                extent / 1e9, options.width, options.height, frames, peakRssMiB());
    std::printf("| load step | ms |\n| --- | ---: |\n");
    std::printf("| generate synthetic records (not part of load) | %.1f |\n", generateMs);
    if (options.fromFile.empty())
        std::printf("| build snapshot (group, sort, prefix max, statistics) | %.1f |\n", buildMs);
    else
        std::printf("| read and parse %s (%.1f MB, %s; parse, group, sort, prefix sums, "
                    "statistics) | %.1f |\n",
                    options.fromFile.c_str(), static_cast<double>(fileBytes) / 1e6,
                    options.nlohmann
                        ? "nlohmann-json: record lines one by one, Chrome JSON streamed"
                        : "loadTraceFile, simdjson when built with it",
                    buildMs);
    std::printf("| hand to the pane (view, lane layout, statistics model) | %.1f |\n", handOffMs);
    std::printf("| first frame | %.1f |\n", firstFrameMs);
    std::printf("| **load total** | **%.1f** |\n", buildMs + handOffMs + firstFrameMs);
    std::printf("| load total, CPU time of the thread | %.1f |\n\n", loadCpuMs);
    std::printf("| sequence | frames | p50 ms | p95 ms | max ms | p50 CPU ms | p95 CPU ms | "
                "items drawn (mean) |\n");
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto& r : results)
        std::printf("| %s | %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f |\n", r.name.c_str(),
                    r.frameMs.size(), percentile(r.frameMs, 50), percentile(r.frameMs, 95),
                    *std::max_element(r.frameMs.begin(), r.frameMs.end()), percentile(r.cpuMs, 50),
                    percentile(r.cpuMs, 95), r.meanItems);
    return 0;
}
