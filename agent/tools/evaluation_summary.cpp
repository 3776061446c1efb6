#include "agent/tools/evaluation_summary.h"

#include <cstdio>

namespace kwb::agent {
namespace {

constexpr std::size_t kLogTail = 4000;

std::string fixed(double value, int decimals) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

std::string tail(const std::string& log) {
    if (log.size() <= kLogTail)
        return log;
    const auto cut = log.find('\n', log.size() - kLogTail);
    return "...\n" + log.substr(cut == std::string::npos ? log.size() - kLogTail : cut + 1);
}

// Failure messages run over several lines (a traceback); the verdict shows them once in full.
std::string firstLine(const std::string& text) {
    const auto end = text.find('\n');
    return end == std::string::npos ? text : text.substr(0, end) + " ...";
}

std::string stageLine(const StageRecord& s) {
    return "  " + s.name + ": " + toString(s.status) + " (" + fixed(s.seconds, 1) + " s)" +
           (s.summary.empty() ? "" : " " + firstLine(s.summary)) + "\n";
}

std::string failedLogs(const EvaluationResult& r, const std::string& only = {}) {
    std::string text;
    for (const auto& s : r.stages)
        if (s.status == StageStatus::Failed && !s.log.empty() && (only.empty() || s.name == only))
            text += "--- " + s.name + " log (end) ---\n" + tail(s.log) +
                    (s.log.back() == '\n' ? "" : "\n");
    return text;
}

std::string diagnostics(const EvaluationResult& r) {
    std::string text;
    for (const auto& d : r.diagnostics)
        text += "  " + formatDiagnostic(d) + "\n";
    return text;
}

std::string timing(const char* label, const TimingStats& t) {
    return std::string("  ") + label + ": " +
           (t.available ? fixed(t.medianMs, 4) + " ms median (" + t.method + ")"
                        : "unavailable" + (t.unavailableReason.empty()
                                               ? std::string()
                                               : " (" + t.unavailableReason + ")")) +
           "\n";
}

} // namespace

std::string summarizeEvaluation(const EvaluationResult& r) {
    std::string text =
        "reward " + std::to_string(r.reward) + ": " + firstLine(r.rewardReason) + "\n";
    text += "verdict: " + r.verdict() + "\n";
    text += "device: " + r.environment.device + (r.cpuMode ? " (CPU mode)" : "") + "\n";
    text += "stages:\n";
    for (const auto& s : r.stages)
        text += stageLine(s);
    text += diagnostics(r);
    if (r.checksRun > 0) {
        text += "checks: " + std::to_string(r.checksPassed) + "/" + std::to_string(r.checksRun) +
                " passed\n";
        for (const auto& o : r.outputErrors)
            text += "  output " + std::to_string(o.index) + " (" + o.dtype + "): max abs error " +
                    fixed(o.maxAbsError, 6) + ", max rel error " + fixed(o.maxRelError, 6) + "\n";
    }
    if (r.candidate.available || r.eager.available) {
        text += "timings:\n" + timing("eager", r.eager) +
                timing("torch.compile", r.compiledBaseline) + timing("yours", r.candidate);
        if (r.speedupVsEager > 0)
            text +=
                "speed-up: " + fixed(r.speedupVsEager, 3) + "x vs eager" +
                (r.speedupVsCompile > 0 ? ", " + fixed(r.speedupVsCompile, 3) + "x vs torch.compile"
                                        : std::string()) +
                "\n";
    }
    for (const auto& f : r.flags)
        text += "flag [" + toString(f.severity) + "] " + f.code + ": " + f.reason + "\n";
    return text + failedLogs(r);
}

std::string summarizeCompile(const EvaluationResult& r) {
    const StageRecord* compile = r.stage("compile");
    std::string text;
    if (!compile) {
        // The run ended before the compile stage: a missing file, the static checks, ...
        text = "not compiled: " + r.verdict() + "\nstages:\n";
        for (const auto& s : r.stages)
            text += stageLine(s);
        return text + failedLogs(r);
    }
    text = std::string(r.compiled ? "compiled" : "compile failed") + "\n" + stageLine(*compile) +
           diagnostics(r);
    for (const auto& f : r.flags)
        text += "flag [" + toString(f.severity) + "] " + f.code + ": " + f.reason + "\n";
    return text + failedLogs(r, "compile");
}

} // namespace kwb::agent
