#include "engine/evaluation/evaluation_result.h"

#include "engine/evaluation/failure_kinds.h"
#include "engine/evaluation/json_field.h"
#include "engine/system/bounded_json.h"

#include <cstdio>
#include <nlohmann/json.hpp>

using nlohmann::json;

namespace kwb {

std::string toString(StageStatus status) {
    switch (status) {
    case StageStatus::NotRun:
        return "not_run";
    case StageStatus::Passed:
        return "passed";
    case StageStatus::Failed:
        return "failed";
    case StageStatus::Skipped:
        return "skipped";
    }
    return "not_run";
}

std::string toString(FlagSeverity severity) {
    switch (severity) {
    case FlagSeverity::Info:
        return "info";
    case FlagSeverity::Warning:
        return "warning";
    case FlagSeverity::Strict:
        return "strict";
    }
    return "warning";
}

std::string toString(TimingStatistic statistic) {
    return statistic == TimingStatistic::Mean ? "mean" : "median";
}

std::optional<TimingStatistic> timingStatisticFrom(const std::string& name) {
    if (name == "median")
        return TimingStatistic::Median;
    if (name == "mean")
        return TimingStatistic::Mean;
    return std::nullopt;
}

double statisticOf(const TimingStats& stats, TimingStatistic statistic) {
    return statistic == TimingStatistic::Mean ? stats.meanMs : stats.medianMs;
}

namespace {

StageStatus stageStatusFrom(const std::string& text) {
    for (StageStatus s : {StageStatus::Passed, StageStatus::Failed, StageStatus::Skipped})
        if (toString(s) == text)
            return s;
    return StageStatus::NotRun;
}

FlagSeverity severityFrom(const std::string& text) {
    for (FlagSeverity s : {FlagSeverity::Info, FlagSeverity::Strict})
        if (toString(s) == text)
            return s;
    return FlagSeverity::Warning;
}

Severity diagnosticSeverityFrom(const std::string& text) {
    return text == "warning" ? Severity::Warning
           : text == "note"  ? Severity::Note
                             : Severity::Error;
}

std::string formatSpeedup(double speedup) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2fx", speedup);
    return buffer;
}

} // namespace

json toJson(const TimingStats& t) {
    if (!t.available)
        return {{"available", false}, {"reason", t.unavailableReason}};
    return {{"available", true},
            {"median_ms", t.medianMs},
            {"mean_ms", t.meanMs},
            {"min_ms", t.minMs},
            {"max_ms", t.maxMs},
            {"stdev_ms", t.stdevMs},
            {"p10_ms", t.p10Ms},
            {"p90_ms", t.p90Ms},
            {"samples", t.samples},
            {"method", t.method},
            {"host_median_ms", t.hostMedianMs},
            {"cv", t.cv},
            {"round_cv", t.roundCv},
            {"rounds", t.rounds},
            {"stable", t.stable},
            {"round_medians_ms", t.roundMediansMs},
            {"host_wait_ms", t.hostWaitMs},
            {"rounds_retimed", t.roundsRetimed},
            {"host_disturbed", t.hostDisturbed}};
}

namespace {

// [low, high], or null.
json intervalToJson(const SpeedupInterval& i) {
    return i.available ? json{i.low, i.high} : json(nullptr);
}

} // namespace

SpeedupInterval intervalFromJson(const json& j) {
    SpeedupInterval i;
    if (j.is_array() && j.size() == 2 && j[0].is_number() && j[1].is_number()) {
        i.low = j[0].get<double>();
        i.high = j[1].get<double>();
        i.available = i.low > 0 && i.low <= i.high;
    }
    return i;
}

TimingStats timingFromJson(const json& j) {
    TimingStats t;
    if (!j.is_object())
        return t;
    t.available = j.value("available", false);
    t.unavailableReason = j.value("reason", "");
    t.medianMs = j.value("median_ms", 0.0);
    t.meanMs = j.value("mean_ms", 0.0);
    t.minMs = j.value("min_ms", 0.0);
    t.maxMs = j.value("max_ms", 0.0);
    t.stdevMs = j.value("stdev_ms", 0.0);
    t.p10Ms = j.value("p10_ms", 0.0);
    t.p90Ms = j.value("p90_ms", 0.0);
    t.samples = intOr(j, "samples", 0);
    t.method = j.value("method", "");
    t.hostMedianMs = j.value("host_median_ms", 0.0);
    t.cv = j.value("cv", 0.0);
    t.roundCv = j.value("round_cv", 0.0);
    t.rounds = intOr(j, "rounds", 0);
    t.stable = j.value("stable", false);
    t.roundMediansMs = jsonField<std::vector<double>>(j, "round_medians_ms", {});
    t.hostWaitMs = j.value("host_wait_ms", 0.0);
    t.roundsRetimed = intOr(j, "rounds_retimed", 0);
    t.hostDisturbed = j.value("host_disturbed", false);
    return t;
}

Diagnostic diagnosticFromJson(const json& d) {
    return {jsonField<std::string>(d, "file", ""), jsonField(d, "line", 0),
            jsonField(d, "column", 0),
            diagnosticSeverityFrom(jsonField<std::string>(d, "severity", "error")),
            jsonField<std::string>(d, "message", "")};
}

OutputError outputErrorFromJson(const json& o) {
    return {jsonField(o, "index", 0), jsonField(o, "max_abs_error", 0.0),
            jsonField(o, "max_rel_error", 0.0), jsonField(o, "shape", std::vector<std::int64_t>{}),
            jsonField<std::string>(o, "dtype", "")};
}

IntegrityFlag flagFromJson(const json& f) {
    return {jsonField<std::string>(f, "code", "unknown"),
            severityFrom(jsonField<std::string>(f, "severity", "warning")),
            jsonField<std::string>(f, "reason", "")};
}

const StageRecord* EvaluationResult::stage(const std::string& name) const {
    for (const auto& s : stages)
        if (s.name == name)
            return &s;
    return nullptr;
}

bool EvaluationResult::taskFailed() const {
    const StageRecord* inspect = stage("inspect");
    return inspect && inspect->status == StageStatus::Failed && isTaskFailure(failureKind);
}

bool EvaluationResult::hasStrictFlag() const {
    for (const auto& flag : flags)
        if (flag.severity == FlagSeverity::Strict)
            return true;
    return false;
}

double EvaluationResult::stageSeconds() const {
    double sum = 0.0;
    for (const auto& s : stages)
        sum += s.seconds;
    return sum;
}

std::string EvaluationResult::verdict() const {
    if (!failureKind.empty())
        return failureKind + ": " + failureMessage;
    if (hasStrictFlag())
        return "rejected by integrity checks";
    if (!correct)
        return "not verified";
    std::string text = "correct";
    if (speedupVsEager > 0)
        text += ", " + formatSpeedup(speedupVsEager) + " vs eager";
    if (speedupVsCompile > 0)
        text += ", " + formatSpeedup(speedupVsCompile) + " vs torch.compile";
    return text;
}

json toJson(const EvaluationResult& r) {
    json stages = json::array();
    for (const auto& s : r.stages)
        stages.push_back({{"name", s.name},
                          {"status", toString(s.status)},
                          {"seconds", s.seconds},
                          {"summary", s.summary},
                          {"log", s.log},
                          {"prepared_ahead", s.preparedAhead},
                          {"start_seconds", s.startSeconds},
                          {"lane_wait_seconds", s.laneWaitSeconds},
                          {"build_wait_seconds", s.buildWaitSeconds},
                          {"alone_lane_wait_seconds", s.aloneLaneWaitSeconds},
                          {"preparation_wait_seconds", s.preparationWaitSeconds},
                          {"worker_started", s.workerStarted}});
    json diagnostics = json::array();
    for (const auto& d : r.diagnostics)
        diagnostics.push_back({{"file", d.file},
                               {"line", d.line},
                               {"column", d.column},
                               {"severity", toString(d.severity)},
                               {"message", d.message}});
    json outputs = json::array();
    for (const auto& o : r.outputErrors)
        outputs.push_back({{"index", o.index},
                           {"max_abs_error", o.maxAbsError},
                           {"max_rel_error", o.maxRelError},
                           {"shape", o.shape},
                           {"dtype", o.dtype}});
    json flags = json::array();
    for (const auto& f : r.flags)
        flags.push_back(
            {{"code", f.code}, {"severity", toString(f.severity)}, {"reason", f.reason}});
    const EnvironmentInfo& e = r.environment;
    return {{"format", "kwb-evaluation"},
            {"version", r.formatVersion},
            {"workspace", r.workspace},
            {"reference", r.referencePath},
            {"candidate", r.candidatePath},
            {"started_at", r.startedAt},
            {"total_seconds", r.totalSeconds},
            {"seed", r.seed},
            {"cpu_mode", r.cpuMode},
            {"reward_provisional", r.rewardProvisional},
            {"sandboxed", r.sandboxed},
            {"sandbox", r.sandbox},
            {"stages", stages},
            {"compiled", r.compiled},
            {"correct", r.correct},
            {"failure", {{"kind", r.failureKind}, {"message", r.failureMessage}}},
            {"diagnostics", diagnostics},
            {"checks", {{"run", r.checksRun}, {"passed", r.checksPassed}}},
            {"rules",
             {{"profile", r.evaluationProfile},
              {"modified", r.profileModified},
              {"atol", r.atol},
              {"rtol", r.rtol},
              {"dtype_tolerances", r.dtypeTolerances},
              {"speedup_statistic", toString(r.speedupStatistic)}}},
            {"outputs", outputs},
            {"timings",
             {{"eager", toJson(r.eager)},
              {"compile", toJson(r.compiledBaseline)},
              {"candidate", toJson(r.candidate)},
              {"baselines_from_cache", r.baselinesFromCache}}},
            {"speedup",
             {{"vs_eager", r.speedupVsEager},
              {"vs_compile", r.speedupVsCompile},
              {"interval_level", r.intervalLevel},
              {"vs_eager_interval", intervalToJson(r.intervalVsEager)},
              {"vs_compile_interval", intervalToJson(r.intervalVsCompile)}}},
            {"reward", r.reward},
            {"reward_reason", r.rewardReason},
            {"verdict", r.verdict()},
            {"flags", flags},
            {"integrity", toJson(r.integrity)},
            {"timeline_records", r.timelineRecordPath},
            {"counters",
             {{"report", r.countersReportPath},
              {"details_csv", r.countersDetailsPath},
              {"raw_csv", r.countersRawPath}}},
            {"environment",
             {{"device", e.device},
              {"device_name", e.deviceName},
              {"driver", e.driverVersion},
              {"cuda", e.cudaVersion},
              {"torch", e.torchVersion},
              {"python", e.pythonVersion},
              {"python_path", e.pythonPath}}}};
}

bool fromJson(const json& j, EvaluationResult& r, std::string* error) {
    auto fail = [&](const std::string& why) {
        if (error)
            *error = why;
        return false;
    };
    if (!j.is_object() || j.value("format", "") != "kwb-evaluation")
        return fail("not a kwb evaluation record");
    const int version = intOr(j, "version", 0);
    if (version < 1 || version > EvaluationResult::kFormatVersion)
        return fail("evaluation record version " + std::to_string(version) +
                    " is not supported (this build reads up to " +
                    std::to_string(EvaluationResult::kFormatVersion) + ")");
    try {
        r = EvaluationResult{};
        r.formatVersion = version;
        r.workspace = j.value("workspace", "");
        r.referencePath = j.value("reference", "");
        r.candidatePath = j.value("candidate", "");
        r.startedAt = j.value("started_at", "");
        r.totalSeconds = j.value("total_seconds", 0.0);
        r.seed = j.value("seed", std::uint64_t{0});
        r.cpuMode = j.value("cpu_mode", false);
        r.rewardProvisional = jsonField<std::string>(j, "reward_provisional", "");
        r.sandboxed = j.value("sandboxed", false);
        r.sandbox = j.value("sandbox", std::string());
        for (const auto& s : j.value("stages", json::array()))
            r.stages.push_back({s.value("name", ""), stageStatusFrom(s.value("status", "")),
                                s.value("seconds", 0.0), s.value("summary", ""), s.value("log", ""),
                                s.value("prepared_ahead", false), s.value("start_seconds", 0.0),
                                s.value("worker_started", false), s.value("lane_wait_seconds", 0.0),
                                s.value("build_wait_seconds", 0.0),
                                s.value("alone_lane_wait_seconds", 0.0),
                                s.value("preparation_wait_seconds", 0.0)});
        r.compiled = j.value("compiled", false);
        r.correct = j.value("correct", false);
        const json failure = j.value("failure", json::object());
        r.failureKind = failure.value("kind", "");
        r.failureMessage = failure.value("message", "");
        for (const auto& d : j.value("diagnostics", json::array()))
            r.diagnostics.push_back(diagnosticFromJson(d));
        const json checks = j.value("checks", json::object());
        r.checksRun = intOr(checks, "run", 0);
        r.checksPassed = intOr(checks, "passed", 0);
        const json rules = j.value("rules", json::object());
        r.evaluationProfile = jsonField<std::string>(rules, "profile", "");
        r.profileModified = jsonField<bool>(rules, "modified", false);
        r.atol = jsonField<double>(rules, "atol", 0.0);
        r.rtol = jsonField<double>(rules, "rtol", 0.0);
        r.dtypeTolerances = jsonField<std::map<std::string, double>>(rules, "dtype_tolerances", {});
        r.speedupStatistic =
            timingStatisticFrom(jsonField<std::string>(rules, "speedup_statistic", "median"))
                .value_or(TimingStatistic::Median);
        for (const auto& o : j.value("outputs", json::array()))
            r.outputErrors.push_back(outputErrorFromJson(o));
        const json timings = j.value("timings", json::object());
        r.eager = timingFromJson(timings.value("eager", json::object()));
        r.compiledBaseline = timingFromJson(timings.value("compile", json::object()));
        r.candidate = timingFromJson(timings.value("candidate", json::object()));
        r.baselinesFromCache = timings.value("baselines_from_cache", false);
        const json speedup = j.value("speedup", json::object());
        r.speedupVsEager = speedup.value("vs_eager", 0.0);
        r.speedupVsCompile = speedup.value("vs_compile", 0.0);
        r.intervalLevel = jsonField<double>(speedup, "interval_level", 0.0);
        r.intervalVsEager = intervalFromJson(speedup.value("vs_eager_interval", json()));
        r.intervalVsCompile = intervalFromJson(speedup.value("vs_compile_interval", json()));
        r.reward = intOr(j, "reward", -1);
        r.rewardReason = j.value("reward_reason", "");
        for (const auto& f : j.value("flags", json::array()))
            r.flags.push_back(flagFromJson(f));
        r.integrity = integrityFromJson(j.value("integrity", json::object()));
        r.timelineRecordPath = j.value("timeline_records", "");
        if (const json counters = j.value("counters", json::object()); counters.is_object()) {
            r.countersReportPath = counters.value("report", "");
            r.countersDetailsPath = counters.value("details_csv", "");
            r.countersRawPath = counters.value("raw_csv", "");
        }
        const json e = j.value("environment", json::object());
        r.environment = {e.value("device", ""),     e.value("device_name", ""),
                         e.value("driver", ""),     e.value("cuda", ""),
                         e.value("torch", ""),      e.value("python", ""),
                         e.value("python_path", "")};
    } catch (const json::exception& ex) {
        return fail(std::string("malformed evaluation record: ") + ex.what());
    }
    return true;
}

} // namespace kwb
