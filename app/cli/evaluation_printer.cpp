#include "evaluation_printer.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace kwb::cli {
namespace {

std::string fixed(double value, int decimals = 3) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

std::string describeTiming(const TimingStats& t) {
    if (!t.available)
        return "unavailable" +
               (t.unavailableReason.empty() ? std::string() : " (" + t.unavailableReason + ")");
    std::string text = fixed(t.medianMs, 4) + " ms median, +-" + fixed(t.spreadPercent(), 1) +
                       "% (" + std::to_string(t.samples) + " samples";
    if (t.rounds > 0)
        text += ", " + std::to_string(t.rounds) + " rounds, round medians +-" +
                fixed(100 * t.roundCv, 1) + "%" + (t.stable ? "" : " UNSTABLE");
    return text + ", " + t.method + ")";
}

void printIntegrity(std::ostream& out, const IntegrityEvidence& e) {
    out << "integrity evidence:\n";
    if (!e.secondShape.empty())
        out << "  second shape: "
            << (e.secondShapeChecked ? (e.secondShapePassed ? "passed, " : "FAILED, ")
                                     : std::string("not checked: "))
            << e.secondShape << "\n";
    if (!e.extensionCalls.empty()) {
        out << "  extension calls:";
        for (const auto& [name, count] : e.extensionCalls)
            out << " " << name << " x" << count;
        out << "\n";
    }
    if (e.timedOutputsChecked > 0)
        out << "  timed outputs checked against the reference: " << e.timedOutputsChecked << "\n";
    if (e.externalTimingChecked)
        out << "  judge's clock around the candidate's batches: " << e.externalWallMs << " ms, "
            << e.externalUnexplainedMs << " ms unexplained by the reported times (allowed "
            << e.externalAllowedMs << " ms; " << e.externalInconsistentBatches << " of "
            << e.externalBatches << " batches over; "
            << (e.externalTimingConsistent ? "consistent" : "INCONSISTENT") << ")\n";
    if (e.kernelCensusAvailable) {
        out << "  GPU time per forward: custom " << fixed(e.customUs, 1) << " us, library "
            << fixed(e.libraryUs, 1) << " us, torch " << fixed(e.torchUs, 1) << " us, other "
            << fixed(e.otherUs, 1) << " us\n";
        for (const auto& k : e.kernels)
            out << "    [" << k.origin << "] " << k.name.substr(0, 100) << ": "
                << fixed(k.microsecondsPerForward, 1) << " us\n";
    } else if (!e.kernelCensusNote.empty()) {
        out << "  kernels: " << e.kernelCensusNote << "\n";
    }
    if (e.copyBandwidthGBs > 0)
        out << "  memory floor: " << fixed(e.bytesMoved / 1e6, 1) << " MB at "
            << fixed(e.copyBandwidthGBs, 0) << " GB/s = " << fixed(e.memoryFloorMs, 4) << " ms"
            << (e.memoryFloorApplies ? "" : " (not applied)") << "\n";
    if (!e.gpuStateBefore.empty())
        out << "  GPU: " << e.gpuStateBefore << " -> " << e.gpuStateAfter << "\n";
}

} // namespace

void printEvaluation(std::ostream& out, const EvaluationResult& r) {
    out << "reward " << r.reward << ": " << r.rewardReason << "\n";
    if (!r.rewardProvisional.empty() && r.reward > 1)
        out << "reward is provisional: " << r.rewardProvisional << "\n";
    out << "verdict: " << r.verdict() << "\n";
    out << "device: " << r.environment.device << " (" << r.environment.deviceName << ")"
        << (r.cpuMode ? ", CPU mode" : "") << "; torch " << r.environment.torchVersion
        << (r.environment.driverVersion.empty() ? ""
                                                : "; driver CUDA " + r.environment.driverVersion)
        << (r.sandboxed ? "; sandboxed" : "; NOT sandboxed")
        << (r.sandbox.empty() ? std::string() : " (" + r.sandbox + ")") << "\n";
    if (!r.evaluationProfile.empty()) {
        out << "rules: " << r.evaluationProfile << (r.profileModified ? " (modified)" : "")
            << ", tolerance ";
        for (const auto& [dtype, tolerance] : r.dtypeTolerances)
            out << dtype << " " << tolerance << ", ";
        out << (r.dtypeTolerances.empty() ? "" : "others ") << "atol " << r.atol << " rtol "
            << r.rtol << "\n";
    }
    out << "stages:\n";
    for (const auto& s : r.stages) {
        out << "  " << s.name << std::string(s.name.size() < 10 ? 10 - s.name.size() : 1, ' ')
            << toString(s.status) << "  " << fixed(s.seconds, 2) << " s  " << s.summary;
        // Where a stage's wall-clock went besides its own work (process or worker start).
        if (s.startSeconds >= 0.05 || s.workerStarted)
            out << "  [" << fixed(s.startSeconds, 2) << " s of it starting"
                << (s.workerStarted ? " a warm worker" : "") << "]";
        out << "\n";
    }
    for (const auto& d : r.diagnostics)
        out << "  " << formatDiagnostic(d) << "\n";
    if (r.checksRun > 0) {
        out << "checks: " << r.checksPassed << "/" << r.checksRun << " passed\n";
        for (const auto& o : r.outputErrors)
            out << "  output " << o.index << " (" << o.dtype << "): max abs error " << o.maxAbsError
                << ", max rel error " << o.maxRelError << "\n";
    }
    if (r.candidate.available || r.eager.available) {
        out << "timings" << (r.baselinesFromCache ? " (eager/compile from cache)" : "") << ":\n"
            << "  eager      " << describeTiming(r.eager) << "\n"
            << "  compile    " << describeTiming(r.compiledBaseline) << "\n"
            << "  candidate  " << describeTiming(r.candidate) << "\n";
        auto interval = [&](const SpeedupInterval& i) {
            return i.available ? " [" + fixed(i.low) + "-" + fixed(i.high) + "]" : std::string();
        };
        if (r.speedupVsEager > 0)
            out << "speed-up: " << fixed(r.speedupVsEager) << "x" << interval(r.intervalVsEager)
                << " vs eager"
                << (r.speedupVsCompile > 0 ? ", " + fixed(r.speedupVsCompile) + "x" +
                                                 interval(r.intervalVsCompile) + " vs torch.compile"
                                           : "")
                << (r.intervalVsEager.available
                        ? " (" + fixed(100.0 * r.intervalLevel, 0) + "% intervals over the rounds)"
                        : "")
                << "\n";
    }
    if (r.correct)
        printIntegrity(out, r.integrity);
    for (const auto& f : r.flags)
        out << "flag [" << toString(f.severity) << "] " << f.code << ": " << f.reason << "\n";
    if (!r.countersDetailsPath.empty())
        out << "counters: " << r.countersDetailsPath << " (raw: " << r.countersRawPath
            << "); read them with kwb counters " << r.countersDetailsPath << " --raw "
            << r.countersRawPath << "\n";
    out << "total " << fixed(r.totalSeconds, 2) << " s (stages " << fixed(r.stageSeconds(), 2)
        << " s, between them " << fixed(std::max(0.0, r.totalSeconds - r.stageSeconds()), 2)
        << " s), seed " << r.seed << "\n";
}

} // namespace kwb::cli
