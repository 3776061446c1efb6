#include "engine/screening/task_filter.h"

#include "engine/evaluation/bytecode_cache.h"
#include "engine/evaluation/harness_stage.h"
#include "engine/system/bounded_json.h"
#include "engine/system/content_hash.h"
#include "engine/system/default_budgets.h"
#include "engine/system/python_environment.h"
#include "engine/system/resource_paths.h"
#include "engine/system/user_directories.h"
#include "engine/workspace/contained_files.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <unistd.h>

namespace kwb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {
// Bumped when the screen stage measures differently: older entries are screened again.
constexpr int kScreenCacheVersion = 1;

std::string gib(std::uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1ULL << 30));
    return text;
}

std::optional<bool> optionalBool(const json& j, const char* key) {
    if (j.contains(key) && j[key].is_boolean())
        return j[key].get<bool>();
    return std::nullopt;
}

TaskScreen screenFromJson(const json& j) {
    TaskScreen s;
    if (!j.is_object())
        return s;
    if (j.contains("step") && j["step"].is_string())
        s.step = j["step"].get<std::string>();
    if (j.contains("input_bytes") && j["input_bytes"].is_number_unsigned())
        s.inputBytes = j["input_bytes"].get<std::uint64_t>();
    if (j.contains("input_bytes_from") && j["input_bytes_from"].is_string())
        s.inputBytesFrom = j["input_bytes_from"].get<std::string>();
    s.eagerRuns = optionalBool(j, "eager_runs").value_or(false);
    s.compileRuns = optionalBool(j, "compile_runs");
    s.compileAgrees = optionalBool(j, "compile_agrees");
    s.deterministic = optionalBool(j, "deterministic");
    s.constantOutput = optionalBool(j, "constant_output");
    s.inputDependent = optionalBool(j, "input_dependent");
    s.finite = optionalBool(j, "finite");
    if (j.contains("eager_ms") && j["eager_ms"].is_number())
        s.eagerMs = j["eager_ms"].get<double>();
    if (j.contains("error") && j["error"].is_string())
        s.error = j["error"].get<std::string>();
    return s;
}

json screenToJson(const TaskScreen& s) {
    auto opt = [](const std::optional<bool>& v) { return v ? json(*v) : json(nullptr); };
    return {{"step", s.step},
            {"input_bytes", s.inputBytes ? json(*s.inputBytes) : json(nullptr)},
            {"input_bytes_from", s.inputBytesFrom.empty() ? json(nullptr) : json(s.inputBytesFrom)},
            {"eager_runs", s.eagerRuns},
            {"compile_runs", opt(s.compileRuns)},
            {"compile_agrees", opt(s.compileAgrees)},
            {"deterministic", opt(s.deterministic)},
            {"constant_output", opt(s.constantOutput)},
            {"input_dependent", opt(s.inputDependent)},
            {"finite", opt(s.finite)},
            {"eager_ms", s.eagerMs ? json(*s.eagerMs) : json(nullptr)},
            {"error", s.error}};
}

std::uint64_t effectiveBudget(const TaskFilterSettings& settings) {
    return settings.memoryBudgetBytes ? settings.memoryBudgetBytes : inputBudgetWithin(0);
}

// The cache entry of one task under the settings that change what is measured.
// Each task's text as a file in `folder` that the sandboxed stages read, named by its content
// (written once, kept between runs). Returns "" or why a file could not be written.
std::string writeTaskFiles(const fs::path& folder, const std::vector<TaskSetEntry>& tasks,
                           std::vector<fs::path>& files) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    for (const TaskSetEntry& task : tasks) {
        const std::string name = task.contentHash.substr(0, 32) + ".py";
        std::string error;
        if (readFileInside(folder, name) != task.source &&
            !writeFileInside(folder, name, task.source, &error))
            return "cannot write " + (folder / name).string() + ": " + error;
        files.push_back(folder / name);
    }
    return {};
}

fs::path cachePathFor(const fs::path& root, const TaskSetEntry& task,
                      const TaskFilterSettings& settings, std::uint64_t budget) {
    const std::string key = task.contentHash + "|" + settings.device + "|" +
                            std::to_string(budget) + "|" + std::to_string(settings.timedCalls) +
                            "|" + (settings.requireCompile ? "compile" : "eager") + "|v" +
                            std::to_string(kScreenCacheVersion);
    return root / (sha256Hex(key).substr(0, 32) + ".json");
}

std::optional<TaskScreen> loadCached(const fs::path& path) {
    std::ifstream in(path);
    if (!in)
        return std::nullopt;
    const json j = parseBoundedJson(in);
    if (j.is_discarded() || !j.is_object() || j.value("version", 0) != kScreenCacheVersion)
        return std::nullopt;
    return screenFromJson(j.value("screen", json::object()));
}

void storeCached(const fs::path& path, const TaskScreen& screen) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    // Write-then-rename: a filter running beside this one never reads half a file.
    const fs::path temporary = path.string() + ".tmp" + std::to_string(std::random_device{}());
    {
        std::ofstream out(temporary);
        out << json{{"version", kScreenCacheVersion}, {"screen", screenToJson(screen)}}.dump(1);
    }
    fs::rename(temporary, path, ec);
    if (ec)
        fs::remove(temporary, ec);
}

HarnessStageSpec stageSpecFor(const std::string& python, const std::string& stage, json request,
                              const fs::path& scratch, const fs::path& taskFolder,
                              const TaskFilterSettings& settings) {
    HarnessStageSpec spec;
    spec.stage = stage;
    request["version"] = 1;
    request["stage"] = stage;
    spec.request = std::move(request);
    spec.python =
        resolveFolderOf(python); // as the evaluator runs it, and as the bytecode cache was filled
    spec.scratchDirectory = scratch.string();
    spec.workingDirectory = taskFolder.string();
    spec.timeout = settings.timeout;
    // Task files are untrusted code (a downloaded dataset): the same sandbox as an evaluation's
    // reference, nothing of kwb's own trees but the harness, no network.
    spec.sandbox.writablePaths = {scratch.string()};
    spec.sandbox.hiddenPaths = kwbOwnTrees();
    spec.sandbox.readOnlyPaths = {taskFolder.string(), harnessDirectory()};
    for (const auto& folder : pythonInstallFolders(python))
        spec.sandbox.readOnlyPaths.push_back(folder);
    // Each task's screen is a process that imports torch: read its bytecode, never recompile it.
    if (const BytecodeCache bytecode = bytecodeCacheFor(cacheDirectory(), python);
        !bytecode.folder.empty()) {
        spec.sandbox.readOnlyOverlays.push_back(bytecode.folder);
        spec.environment["KWB_BYTECODE_CACHE"] = bytecode.folder;
    }
    spec.sandbox.allowGpu = settings.device == "cuda";
    spec.sandbox.limits.cpuSeconds = static_cast<std::uint64_t>(settings.timeout.count()) * 4;
    spec.sandbox.limits.openFiles = 4096;
    spec.sandbox.maxProcesses = 512;
    spec.sandbox.memoryBytes = defaultMemoryBudget();
    spec.sandbox.diskBytes = defaultDiskBudget({scratch.string()});
    if (settings.device != "cuda")
        spec.environment["CUDA_VISIBLE_DEVICES"] = "";
    return spec;
}
} // namespace

std::vector<std::string> filterReasons(const TaskScreen& s, const TaskFilterSettings& settings,
                                       std::uint64_t memoryBudget, bool& skipped) {
    std::vector<std::string> reasons;
    skipped = false;
    if (s.inputBytes && *s.inputBytes > memoryBudget) {
        skipped = true;
        reasons.push_back("inputs need " + gib(*s.inputBytes) + ", more than the " +
                          gib(memoryBudget) + " budget (--memory-budget)");
        return reasons;
    }
    if (!s.eagerRuns) {
        reasons.push_back("does not run eager" + (s.error.empty() ? "" : ": " + s.error));
        return reasons;
    }
    if (s.finite == false)
        reasons.push_back("outputs are not finite (NaN or Inf)");
    if (s.constantOutput == true)
        reasons.push_back("outputs are constant");
    if (s.inputDependent == false)
        reasons.push_back("outputs do not change with the inputs");
    if (s.deterministic == false)
        reasons.push_back("not deterministic: two runs on the same inputs differ");
    if (settings.requireCompile) {
        if (s.compileRuns != true)
            reasons.push_back("does not run under torch.compile" +
                              (s.error.empty() ? "" : ": " + s.error));
        else if (s.compileAgrees == false)
            reasons.push_back("torch.compile's outputs differ from eager's");
    }
    if (s.eagerMs) {
        char text[160];
        if (settings.minEagerMs > 0 && *s.eagerMs < settings.minEagerMs) {
            std::snprintf(text, sizeof text, "eager time %.4f ms is under the %.4f ms minimum",
                          *s.eagerMs, settings.minEagerMs);
            reasons.push_back(text);
        }
        if (settings.maxEagerMs > 0 && *s.eagerMs > settings.maxEagerMs) {
            std::snprintf(text, sizeof text, "eager time %.4f ms is over the %.4f ms maximum",
                          *s.eagerMs, settings.maxEagerMs);
            reasons.push_back(text);
        }
    } else if (s.step != "done" && !s.error.empty() && reasons.empty()) {
        reasons.push_back("screening stopped at " + s.step + ": " + s.error);
    }
    return reasons;
}

TaskFilter::TaskFilter(std::string python, std::string cacheDirectory)
    : python_(std::move(python)), cacheDirectory_(std::move(cacheDirectory)) {}

TaskFilterReport TaskFilter::run(const TaskSet& set, const TaskFilterSettings& settings,
                                 const Progress& progress, std::stop_token stop) const {
    TaskFilterReport report;
    // Absolute and normal: the stages report files by Python's abspath, matched here by text.
    const fs::path root =
        (fs::absolute(fs::path(cacheDirectory_)) / "task-screens").lexically_normal();
    const fs::path taskFolder = root / "tasks";
    const std::uint64_t budget = effectiveBudget(settings);
    std::error_code ec;
    fs::create_directories(taskFolder, ec);
    // This run's own scratch: two filters running at once must not read each other's results.
    const fs::path runScratch =
        root / "scratch" /
        (std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    struct RemovedAtExit {
        fs::path path;
        ~RemovedAtExit() {
            std::error_code ignored;
            fs::remove_all(path, ignored);
        }
    } const scratchCleanup{runScratch};
    std::vector<fs::path> files;
    if (std::string error = writeTaskFiles(taskFolder, set.tasks, files); !error.empty()) {
        report.error = error;
        return report;
    }

    for (std::size_t i = 0; i < set.tasks.size() && !stop.stop_requested(); ++i) {
        const TaskSetEntry& task = set.tasks[i];
        TaskVerdict verdict;
        verdict.id = task.id;
        const fs::path cached = cachePathFor(root, task, settings, budget);
        if (std::optional<TaskScreen> screen = loadCached(cached)) {
            verdict.screen = *screen;
            verdict.fromCache = true;
        } else {
            const fs::path scratch = runScratch / std::to_string(i);
            fs::remove_all(scratch, ec);
            fs::create_directories(scratch, ec);
            json request = {
                {"device", settings.device},         {"reference", files[i].string()},
                {"workspace", taskFolder.string()},  {"scratch_dir", scratch.string()},
                {"build_dir", scratch.string()},     {"seed", 42},
                {"iterations", settings.timedCalls}, {"include_compile", settings.requireCompile},
                {"screen_memory_bytes", budget}};
            HarnessStageSpec spec =
                stageSpecFor(python_, "screen", std::move(request), scratch, taskFolder, settings);
            spec.stop = stop;
            const HarnessStageOutcome outcome = runHarnessStage(spec);
            fs::remove_all(scratch, ec);
            if (outcome.failureKind == "cancelled")
                break;
            if (outcome.failureKind.empty() && outcome.result.is_object() &&
                outcome.result.contains("screen")) {
                verdict.screen = screenFromJson(outcome.result["screen"]);
                storeCached(cached, verdict.screen);
            } else {
                // The stage itself died (a crash, the memory or time limit): not cached, a
                // later run tries again.
                verdict.screen.step = "stage";
                verdict.screen.error = outcome.failureKind + ": " + outcome.failureMessage;
            }
        }
        verdict.reasons = filterReasons(verdict.screen, settings, budget, verdict.skipped);
        if (verdict.screen.step == "stage" && verdict.reasons.empty())
            verdict.reasons.push_back("the screening failed: " + verdict.screen.error);
        verdict.kept = verdict.reasons.empty();
        report.verdicts.push_back(std::move(verdict));
        if (progress)
            progress(i + 1, set.tasks.size(), report.verdicts.back());
    }
    if (stop.stop_requested() || report.verdicts.size() != set.tasks.size()) {
        report.error = "stopped";
        return report;
    }

    // Near-duplicates among the tasks still kept, and against the decontamination sets.
    std::vector<std::string> against;
    std::map<std::string, std::string> againstIds;
    for (const std::string& path : settings.decontaminateAgainst) {
        const TaskSetLoad other = loadTaskSet(path);
        if (!other.ok) {
            report.error = "cannot read the decontamination set " + path + ": " + other.error;
            return report;
        }
        // A decontamination task left out unsaid would let its near-copies through.
        std::vector<fs::path> written;
        if (std::string error = writeTaskFiles(root / "against", other.set.tasks, written);
            !error.empty()) {
            report.error = error;
            return report;
        }
        for (std::size_t k = 0; k < written.size(); ++k) {
            against.push_back(written[k].string());
            againstIds[against.back()] = path + ": " + other.set.tasks[k].id;
        }
    }
    std::vector<std::string> candidates;
    std::map<std::string, std::size_t> indexOf;
    for (std::size_t i = 0; i < files.size(); ++i)
        if (report.verdicts[i].kept && !indexOf.count(files[i].string())) {
            candidates.push_back(files[i].string());
            indexOf[files[i].string()] = i;
        }
    // Two tasks with the same text are one task's copies, found without parsing anything.
    for (std::size_t i = 0; i < files.size(); ++i)
        if (report.verdicts[i].kept && indexOf.at(files[i].string()) != i) {
            report.verdicts[i].kept = false;
            report.verdicts[i].reasons.push_back("the same text as " +
                                                 set.tasks[indexOf.at(files[i].string())].id);
        }
    if (!candidates.empty()) {
        const fs::path scratch = runScratch / "similar";
        fs::remove_all(scratch, ec);
        fs::create_directories(scratch, ec);
        HarnessStageSpec spec = stageSpecFor(python_, "similar",
                                             {{"device", "cpu"},
                                              {"files", candidates},
                                              {"against", against},
                                              {"similarity_threshold", settings.maxSimilarity},
                                              {"scratch_dir", scratch.string()}},
                                             scratch, root, settings);
        spec.stop = stop;
        spec.sandbox.allowGpu = false;
        const HarnessStageOutcome outcome = runHarnessStage(spec);
        fs::remove_all(scratch, ec);
        if (!outcome.ok || !outcome.result.contains("similar_tasks")) {
            report.error = "the near-duplicate search failed: " + outcome.failureKind + ": " +
                           outcome.failureMessage;
            return report;
        }
        const json similar = outcome.result["similar_tasks"].value("similar", json::object());
        for (const auto& [file, match] : similar.items()) {
            const auto found = indexOf.find(file);
            if (found == indexOf.end() || !match.is_object())
                continue;
            const std::string like = match.value("like", "");
            const auto inSet = indexOf.find(like);
            const std::string name = inSet != indexOf.end()   ? set.tasks[inSet->second].id
                                     : againstIds.count(like) ? againstIds[like]
                                                              : like;
            char text[64];
            std::snprintf(text, sizeof text, "%.2f", match.value("similarity", 0.0));
            TaskVerdict& verdict = report.verdicts[found->second];
            verdict.kept = false;
            verdict.reasons.push_back(std::string("a near-duplicate of ") + name +
                                      " (normalized-AST similarity " + text + ")");
        }
    }
    for (const TaskVerdict& verdict : report.verdicts)
        report.kept += verdict.kept ? 1 : 0;
    return report;
}

} // namespace kwb
