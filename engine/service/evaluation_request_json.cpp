#include "engine/service/evaluation_request_json.h"

#include "engine/system/bounded_json.h"

#include <cmath>
#include <limits>

namespace kwb {
namespace {

using nlohmann::json;

// Reads the members a request carries, remembering the first that is malformed.
class Reader {
public:
    explicit Reader(const json& object) : object_(object) {}

    void text(const char* key, std::string& out) {
        if (const json* v = find(key)) {
            if (v->is_string())
                out = v->get<std::string>();
            else
                fail(key, "is not a string");
        }
    }
    void flag(const char* key, bool& out) {
        if (const json* v = find(key)) {
            if (v->is_boolean())
                out = v->get<bool>();
            else
                fail(key, "is not true or false");
        }
    }
    template <typename Integer>
    void integer(const char* key, Integer& out, std::int64_t low, std::int64_t high) {
        if (const json* v = find(key)) {
            const std::optional<std::int64_t> n = jsonInteger(*v);
            if (n && *n >= low && *n <= high)
                out = static_cast<Integer>(*n);
            else
                fail(key, "is not an integer in [" + std::to_string(low) + ", " +
                              std::to_string(high) + "]");
        }
    }
    void unsignedInteger(const char* key, std::uint64_t& out) {
        if (const json* v = find(key)) {
            if (v->is_number_unsigned())
                out = v->get<std::uint64_t>();
            else if (const std::optional<std::int64_t> n = jsonInteger(*v); n && *n >= 0)
                out = static_cast<std::uint64_t>(*n);
            else
                fail(key, "is not a non-negative integer");
        }
    }
    void number(const char* key, double& out, double low, double high) {
        if (const json* v = find(key)) {
            if (v->is_number() && std::isfinite(v->get<double>()) && v->get<double>() >= low &&
                v->get<double>() <= high)
                out = v->get<double>();
            else
                fail(key, "is not a number in [" + std::to_string(low) + ", " +
                              std::to_string(high) + "]");
        }
    }
    void seconds(const char* key, std::chrono::seconds& out, std::int64_t high) {
        std::int64_t value = out.count();
        integer(key, value, 0, high);
        out = std::chrono::seconds(value);
    }
    const json* find(const char* key) const {
        const auto it = object_.find(key);
        return it == object_.end() ? nullptr : &*it;
    }
    void fail(const std::string& key, const std::string& why) {
        if (error_.empty())
            error_ = key + " " + why;
    }
    const std::string& error() const { return error_; }

private:
    const json& object_;
    std::string error_;
};

bool finish(const Reader& reader, std::string* error) {
    if (reader.error().empty())
        return true;
    if (error)
        *error = reader.error();
    return false;
}

constexpr std::int64_t kDay = 86400;

} // namespace

json toJson(const EvaluationTarget& target) {
    return {{"workspace", target.workspace},
            {"reference", target.referencePath},
            {"candidate", target.candidatePath}};
}

json toJson(const EvaluationOptions& o) {
    json tolerances = json::object();
    for (const auto& [dtype, tolerance] : o.dtypeTolerances)
        tolerances[dtype] = tolerance;
    return {{"evaluation_profile", toString(o.evaluationProfile)},
            {"profile_modified", o.profileModified},
            {"device", deviceChoiceName(o.device)},
            {"checks", o.checks},
            {"atol", o.atol},
            {"rtol", o.rtol},
            {"dtype_tolerances", tolerances},
            {"profile", o.profile},
            {"stop_after_compile", o.stopAfterCompile},
            {"refresh_baselines", o.refreshBaselines},
            {"profile_flagged", o.profileFlagged},
            {"sealed_census", o.sealedCensus},
            {"warmup", o.warmup},
            {"iterations", o.iterations},
            {"rounds", o.rounds},
            {"target_cv", o.targetCv},
            {"max_rounds", o.maxRounds},
            {"timing_budget_s", o.timingBudget.count()},
            {"l2_flush", o.l2Flush},
            {"head_start_us", o.headStartMicroseconds},
            {"stage_timeout_s", o.stageTimeout.count()},
            {"memory_limit_bytes", o.memoryLimitBytes},
            {"disk_limit_bytes", o.diskLimitBytes},
            {"warm_worker", o.warmWorker},
            {"standby", o.standby},
            {"seed", o.seed},
            {"collect_timeline", o.collectTimeline},
            {"timeline_record_path", o.timelineRecordPath},
            {"counters", o.counters ? json{{"sections", o.counters->sections},
                                           {"kernel_regex", o.counters->kernelRegex},
                                           {"launch_count", o.counters->launchCount},
                                           {"own_kernels_only", o.counters->ownKernelsOnly},
                                           {"report_folder", o.counters->reportFolder}}
                                    : json(nullptr)},
            {"speedup_threshold", o.reward.speedupThreshold},
            {"decide_on_interval", o.reward.decideOnInterval},
            {"speedup_statistic", toString(o.reward.statistic)}};
}

bool targetFromJson(const json& j, EvaluationTarget& target, std::string* error) {
    if (!j.is_object()) {
        if (error)
            *error = "the target is not an object";
        return false;
    }
    Reader r(j);
    r.text("workspace", target.workspace);
    r.text("reference", target.referencePath);
    r.text("candidate", target.candidatePath);
    if (r.error().empty() && target.workspace.empty() && target.referencePath.empty())
        r.fail("target", "names neither a workspace nor a reference");
    return finish(r, error);
}

bool optionsFromJson(const json& j, EvaluationOptions& o, std::string* error) {
    if (!j.is_object()) {
        if (error)
            *error = "the options are not an object";
        return false;
    }
    Reader r(j);
    std::string profile = toString(o.evaluationProfile);
    r.text("evaluation_profile", profile);
    if (const auto parsed = evaluationProfileFrom(profile))
        o.evaluationProfile = *parsed;
    else
        r.fail("evaluation_profile", "is not cuda-agent, kernelbench or rl");
    r.flag("profile_modified", o.profileModified);
    std::string device = deviceChoiceName(o.device);
    r.text("device", device);
    if (device != "auto" && device != "cpu" && device != "cuda")
        r.fail("device", "is not auto, cpu or cuda");
    o.device = deviceChoiceFrom(device);
    r.integer("checks", o.checks, 1, 1000);
    r.number("atol", o.atol, 0.0, 1e6);
    r.number("rtol", o.rtol, 0.0, 1e6);
    if (const json* tolerances = r.find("dtype_tolerances")) {
        if (!tolerances->is_object() || tolerances->size() > 64) {
            r.fail("dtype_tolerances", "is not an object of at most 64 dtypes");
        } else {
            o.dtypeTolerances.clear();
            for (const auto& [dtype, value] : tolerances->items()) {
                if (!value.is_number() || !std::isfinite(value.get<double>()) ||
                    value.get<double>() < 0.0) {
                    r.fail("dtype_tolerances." + dtype, "is not a non-negative number");
                    break;
                }
                o.dtypeTolerances[dtype] = value.get<double>();
            }
        }
    }
    r.flag("profile", o.profile);
    r.flag("stop_after_compile", o.stopAfterCompile);
    r.flag("refresh_baselines", o.refreshBaselines);
    r.flag("profile_flagged", o.profileFlagged);
    r.flag("sealed_census", o.sealedCensus);
    r.integer("warmup", o.warmup, 0, 100000);
    r.integer("iterations", o.iterations, 1, 100000);
    r.integer("rounds", o.rounds, 1, 10000);
    r.number("target_cv", o.targetCv, 0.0, 1.0);
    r.integer("max_rounds", o.maxRounds, 1, 10000);
    r.seconds("timing_budget_s", o.timingBudget, kDay);
    r.flag("l2_flush", o.l2Flush);
    r.number("head_start_us", o.headStartMicroseconds, 0.0, 10000.0);
    r.seconds("stage_timeout_s", o.stageTimeout, kDay);
    if (o.stageTimeout.count() < 1)
        r.fail("stage_timeout_s", "is below one second");
    r.unsignedInteger("memory_limit_bytes", o.memoryLimitBytes);
    r.unsignedInteger("disk_limit_bytes", o.diskLimitBytes);
    r.flag("warm_worker", o.warmWorker);
    r.flag("standby", o.standby);
    r.unsignedInteger("seed", o.seed);
    r.flag("collect_timeline", o.collectTimeline);
    r.text("timeline_record_path", o.timelineRecordPath);
    if (const json* counters = r.find("counters"); counters && !counters->is_null()) {
        CounterCollection collection;
        const json sections = counters->value("sections", json::array());
        if (!counters->is_object() || !sections.is_array() || sections.size() > 64) {
            r.fail("counters", "is not an object with at most 64 sections");
        } else {
            for (const json& section : sections) {
                const std::string name = section.is_string() ? section.get<std::string>() : "";
                if (const std::string problem = ncuSectionProblem(name); !problem.empty()) {
                    r.fail("counters.sections", problem);
                    break;
                }
                collection.sections.push_back(name);
            }
            Reader inner(*counters);
            inner.text("kernel_regex", collection.kernelRegex);
            inner.integer("launch_count", collection.launchCount, 1, 10000);
            inner.flag("own_kernels_only", collection.ownKernelsOnly);
            inner.text("report_folder", collection.reportFolder);
            if (!inner.error().empty())
                r.fail("counters:", inner.error());
            o.counters = collection;
        }
    }
    r.number("speedup_threshold", o.reward.speedupThreshold, 1.0, 100.0);
    r.flag("decide_on_interval", o.reward.decideOnInterval);
    std::string statistic = toString(o.reward.statistic);
    r.text("speedup_statistic", statistic);
    if (const auto parsed = timingStatisticFrom(statistic))
        o.reward.statistic = *parsed;
    else
        r.fail("speedup_statistic", "is not median or mean");
    return finish(r, error);
}

} // namespace kwb
