#include "metrics_printer.h"

#include <cstdio>
#include <string>

namespace kwb::cli {
namespace {

std::string percent(double share) {
    char text[16];
    std::snprintf(text, sizeof text, "%.1f%%", 100.0 * share);
    return text;
}

std::string times(const std::optional<double>& value) {
    if (!value)
        return "-";
    char text[16];
    std::snprintf(text, sizeof text, "%.2fx", *value);
    return text;
}

std::string number(double value, const char* format = "%.1f") {
    char text[32];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

void row(std::ostream& out, const std::string& name, const agent::MetricsGroup& g) {
    out << name << "\t" << g.episodes << "\t" << g.scored << "\t" << percent(g.passRate) << "\t"
        << percent(g.fasterThanEagerRate) << "\t" << percent(g.fasterThanCompileRate) << "\t"
        << times(g.geomeanVsEager) << "\t" << times(g.geomeanVsCompile) << "\t"
        << percent(g.fastPVsCompile.at(1.0)) << "/" << percent(g.fastPVsCompile.at(1.05)) << "/"
        << percent(g.fastPVsCompile.at(1.5)) << "/" << percent(g.fastPVsCompile.at(2.0)) << "\t"
        << number(g.meanReward, "%.2f") << "\t" << percent(g.hackFlagRate) << "\t"
        << number(g.meanTurns) << "\t" << number(g.meanTokens, "%.0f") << "\t$"
        << number(g.meanCostUsd, "%.4f") << "\t"
        << (g.gpuSecondsPerEvaluation ? number(*g.gpuSecondsPerEvaluation) + " s" : "-") << "\t"
        << g.infrastructureErrors << "\n";
}

} // namespace

void printMetrics(std::ostream& out, const agent::RolloutMetrics& metrics) {
    out << "level\tepisodes\tscored\tpass\t>eager\t>compile\tgeomean/eager\tgeomean/compile\t"
           "fast_1/1.05/1.5/2 vs compile\tmean reward\thack flags\tturns\ttokens\tcost\t"
           "GPU s/eval\tinfra errors\n";
    for (const auto& [level, group] : metrics.byLevel)
        row(out, level == 0 ? "none" : std::to_string(level), group);
    row(out, "all", metrics.overall);
}

} // namespace kwb::cli
