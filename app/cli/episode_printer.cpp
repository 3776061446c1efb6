#include "episode_printer.h"

#include <cstdio>
#include <string>
#include <vector>

namespace kwb::cli {
namespace {

// Long payloads (file contents, tool output) stay readable in a terminal: first line, capped.
std::string firstLine(const std::string& text, std::size_t limit = 110) {
    std::string line = text.substr(0, text.find('\n'));
    if (line.size() > limit)
        line = line.substr(0, limit) + "...";
    else if (line.size() < text.size())
        line += " ...";
    return line;
}

std::string text(const nlohmann::json& payload, const char* key) {
    return payload.is_object() && payload.contains(key) && payload[key].is_string()
               ? payload[key].get<std::string>()
               : std::string();
}

std::string describe(const agent::EpisodeEvent& e) {
    const nlohmann::json& p = e.payload;
    switch (e.kind) {
    case agent::EventKind::ToolCall:
        return text(p, "name") + " " + firstLine(text(p, "arguments"));
    case agent::EventKind::ToolResult:
        return (p.value("tool_error", false) ? "error: " : "") + firstLine(text(p, "text"));
    case agent::EventKind::Evaluation:
        return "reward " + std::to_string(p.value("reward", -1)) + ": " +
               firstLine(p.value("verdict", std::string()));
    case agent::EventKind::FileDiff:
        return text(p, "path");
    default:
        if (!text(p, "text").empty())
            return firstLine(text(p, "text"));
        if (!text(p, "message").empty())
            return firstLine(text(p, "message"));
        return firstLine(p.dump());
    }
}

} // namespace

std::string terminalSafe(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        char escaped[8];
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
            out += escaped;
        } else if (c == 0xc2 && i + 1 < text.size() &&
                   static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
            // U+0080..U+009F in UTF-8: CSI (U+009B) and OSC (U+009D) work like ESC [ and ESC ].
            std::snprintf(escaped, sizeof escaped, "\\u%04x",
                          static_cast<unsigned char>(text[i + 1]));
            out += escaped;
            ++i;
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    return out;
}

void printEvent(std::ostream& out, const agent::EpisodeEvent& event) {
    char head[48];
    std::snprintf(head, sizeof head, "%5lld %-17s ", static_cast<long long>(event.sequence),
                  std::string(agent::eventKindName(event.kind)).c_str());
    out << head << terminalSafe(describe(event)) << "\n";
}

void printEpisodeSummary(std::ostream& out, const agent::EpisodeRecord& e) {
    out << "episode " << e.id << " [" << agent::episodeStatusName(e.status) << "]"
        << (e.reward ? " reward " + std::to_string(static_cast<int>(*e.reward)) : "")
        << (e.parentId ? " fork of " + std::to_string(*e.parentId) + " at step " +
                             std::to_string(e.forkSequence.value_or(0))
                       : "")
        << "\n  task " << terminalSafe(e.task) << "\n  model " << terminalSafe(e.model) << " via "
        << terminalSafe(e.provider) << "\n  " << e.turns << " turns, " << e.usage.inputTokens
        << " input / " << e.usage.outputTokens << " output tokens, " << e.wallSeconds
        << " s, started " << e.startedAt << "\n";
}

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
        << g.infrastructureErrors << "\t" << g.taskFailures << "\n";
}

void printMetricsTable(std::ostream& out, const agent::RolloutMetrics& metrics) {
    out << "level\tepisodes\tscored\tpass\t>eager\t>compile\tgeomean/eager\tgeomean/compile\t"
           "fast_1/1.05/1.5/2 vs compile\tmean reward\thack flags\tturns\ttokens\tcost\t"
           "GPU s/eval\tinfra errors\ttask failed\n";
    for (const auto& [level, group] : metrics.byLevel)
        row(out, level == 0 ? "none" : std::to_string(level), group);
    row(out, "all", metrics.overall);
}

} // namespace

void printMetricsOf(std::ostream& out, const std::vector<agent::EpisodeRecord>& episodes,
                    bool asJson) {
    const agent::RolloutMetrics metrics = agent::metricsOfRecords(episodes);
    if (asJson)
        out << agent::toJson(metrics).dump(2) << "\n";
    else
        printMetricsTable(out, metrics);
}

} // namespace kwb::cli
