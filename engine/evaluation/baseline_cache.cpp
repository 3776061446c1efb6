#include "engine/evaluation/baseline_cache.h"

#include "engine/evaluation/cpu_shares.h"
#include "engine/evaluation/evaluator.h"
#include "engine/system/bounded_json.h"
#include "engine/system/content_hash.h"
#include "engine/system/user_directories.h"

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kwb {
namespace {
// 3: entries keep each variant's per-round medians, which the speed-up intervals resample; an
// entry without them cannot decide a milestone and is timed again.
// 4: on the GPU eager and torch.compile are timed under the kernel recording the candidate's
// calls carry (the judge's census), so an older entry would compare unlike with like.
// 5: the L2 flush is queued, not waited for, before each timed call, so the events no longer
// include the launch overhead of reaching the first kernel.
constexpr int kCacheVersion = 5;
// The keys whose turn is taken, process-wide.
struct Turns {
    std::mutex mutex;
    std::condition_variable_any released;
    std::set<std::string> taken;
};
Turns& turns() {
    static Turns instance;
    return instance;
}

fs::path pathFor(const BaselineKey& key) {
    return fs::path(cacheDirectory()) / "baselines" / (key.hash + ".json");
}
} // namespace

BaselineKey baselineKeyFor(const std::string& taskPath, const std::string& device,
                           const std::string& deviceName, const std::string& torchVersion,
                           const EvaluationOptions& o) {
    BaselineKey key;
    key.description =
        "task " + sha256OfFile(taskPath).substr(0, 16) + ", " + device + " " + deviceName +
        ", torch " + torchVersion + ", warmup " + std::to_string(o.warmup) + ", iterations " +
        std::to_string(o.iterations) + ", rounds " + std::to_string(o.rounds) + "-" +
        std::to_string(o.maxRounds) + ", target cv " + std::to_string(o.targetCv) +
        (o.l2Flush ? ", l2 flush" : "") +
        // The judge's process records its own launches only beside a candidate's
        // sealed records (the same per-launch cost on both sides).
        (o.sealedCensus ? "" : ", no kernel records") +
        // CPU baselines timed with spinning OpenMP threads (before CPU stages
        // slept them) are not the candidate's conditions.
        (device == "cpu" ? std::string(", omp wait ") + kCpuOpenMpWaitPolicy : std::string()) +
        (o.headStartMicroseconds > 0
             ? ", head start " + std::to_string(o.headStartMicroseconds) + " us"
             : std::string());
    key.hash = sha256Hex(key.description + "|v" + std::to_string(kCacheVersion));
    return key;
}

std::optional<CachedBaseline> loadBaseline(const BaselineKey& key) {
    std::ifstream in(pathFor(key));
    if (!in)
        return std::nullopt;
    json j = parseBoundedJson(in);
    if (j.is_discarded() || intOr(j, "version", 0) != kCacheVersion)
        return std::nullopt;
    CachedBaseline baseline{timingFromJson(j.value("eager", json::object())),
                            timingFromJson(j.value("compile", json::object()))};
    // Without torch.compile's timing a reward measures against eager alone. Why compile failed
    // (no compiler, a file size limit, an inductor bug) may be gone by the next evaluation, so
    // such an entry is timed again rather than trusted until the cache is refreshed by hand.
    if (!baseline.eager.available || !baseline.compiled.available)
        return std::nullopt;
    return baseline;
}

bool worthCaching(const CachedBaseline& baseline) {
    return baseline.eager.available && !baseline.eager.hostDisturbed &&
           !baseline.compiled.hostDisturbed;
}

void storeBaseline(const BaselineKey& key, const CachedBaseline& baseline) {
    std::error_code ec;
    const fs::path target = pathFor(key);
    fs::create_directories(target.parent_path(), ec);
    // Write-then-rename: concurrent evaluators never read a half-written file.
    std::random_device device;
    const fs::path temporary = target.string() + ".tmp" + std::to_string(device());
    {
        std::ofstream out(temporary);
        out << json{{"version", kCacheVersion},
                    {"key", key.description},
                    {"eager", toJson(baseline.eager)},
                    {"compile", toJson(baseline.compiled)}}
                   .dump(2);
    }
    fs::rename(temporary, target, ec);
    if (ec)
        fs::remove(temporary, ec);
}

std::optional<BaselineTurn> BaselineTurn::take(const BaselineKey& key, std::stop_token stop) {
    Turns& t = turns();
    std::unique_lock lock(t.mutex);
    if (!t.released.wait(lock, stop, [&] { return !t.taken.count(key.hash); }))
        return std::nullopt;
    t.taken.insert(key.hash);
    return BaselineTurn(key.hash);
}

BaselineTurn::~BaselineTurn() {
    if (hash_.empty())
        return;
    Turns& t = turns();
    {
        std::lock_guard lock(t.mutex);
        t.taken.erase(hash_);
    }
    t.released.notify_all();
}

} // namespace kwb
