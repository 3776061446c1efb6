// Edit -> verified + profiled latency for one kernel of a bundled task, three ways, in one run
// on one GPU:
//   fast  - the fast-path flavour (device-only .cu through NVRTC, kwb_kernels) in the warm worker
//   agent - the CUDA-Agent layout, incremental torch-extension build (ninja), warm worker
//   cold  - the CUDA-Agent layout rebuilt from scratch with one fresh Python per stage, the
//           way CUDA Agent's scripts run: every edit gets an empty cache folder (no extension,
//           inductor, Triton or baseline cache), as a fresh sandbox has, so its profile also
//           times a cold torch.compile
// Each edit changes a constant's spelling in the kernel (its value stays the same in float), so
// every edit really recompiles and every evaluation must still be correct. Before each edit the
// benchmark pauses (--pause-ms) as a person would between reading a result and saving again;
// latency counts from the save. With the warm worker, standby children prepare the next verify
// and profile during that pause (--no-standby turns them off, --pause-ms 0 gives them no time).
#include "engine/evaluation/evaluation_profile.h"
#include "engine/evaluation/evaluator.h"
#include "engine/system/resource_paths.h"
#include "engine/system/user_directories.h"
#include "engine/workspace/task_catalog.h"
#include "engine/workspace/workspace.h"
#include "tests/test_files.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using kwb::test::readText;
using kwb::test::writeText;
using nlohmann::json;

namespace {

struct Sample {
    double total = 0, compile = 0, verify = 0, profile = 0, other = 0;
    int reward = -1;
    double speedupEager = 0;
    std::string failure;
    std::string phases; // the harness's "phase times:" lines of verify and profile
    // Whether verify / profile ran on a standby child's preparation (made before the edit).
    bool verifyPrepared = false, profilePrepared = false;
};

double percentile(std::vector<double> values, double p) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const double rank = p * static_cast<double>(values.size() - 1);
    const auto low = static_cast<std::size_t>(rank);
    const auto high = std::min(low + 1, values.size() - 1);
    return values[low] + (values[high] - values[low]) * (rank - static_cast<double>(low));
}

Sample measure(const kwb::Evaluator& evaluator, const fs::path& ws,
               const kwb::EvaluationOptions& options) {
    const kwb::EvaluationResult r =
        evaluator.evaluate(kwb::EvaluationTarget::forWorkspace(ws.string()), options);
    Sample s;
    s.total = r.totalSeconds;
    for (const auto& stage : r.stages) {
        if (stage.name == "compile")
            s.compile += stage.seconds;
        else if (stage.name == "verify")
            s.verify += stage.seconds;
        else if (stage.name == "profile")
            s.profile += stage.seconds;
        std::istringstream lines(stage.log);
        for (std::string line; std::getline(lines, line);) {
            if (line.rfind("phase times:", 0) == 0 || line.rfind("stage time:", 0) == 0 ||
                line.rfind("prepared before the request:", 0) == 0 ||
                (stage.name == "compile" && line.find(": NVRTC ") != std::string::npos))
                s.phases += "  " + stage.name + " " + line + "\n";
            if (line.rfind("prepared before the request:", 0) == 0)
                (stage.name == "verify" ? s.verifyPrepared : s.profilePrepared) = true;
        }
    }
    s.other = s.total - s.compile - s.verify - s.profile;
    s.phases += "  stages:";
    for (const auto& stage : r.stages) {
        char text[96];
        std::snprintf(text, sizeof text, " %s %.3f", stage.name.c_str(), stage.seconds);
        s.phases += text;
    }
    s.phases += "\n";
    s.reward = r.reward;
    s.speedupEager = r.speedupVsEager;
    if (!r.correct)
        s.failure = r.failureKind + ": " + r.failureMessage.substr(0, 300);
    return s;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"Edit -> verified + profiled latency of the fast, agent and cold edit loops"};
    std::string taskId = "01_gelu";
    std::string constant = "0.044715f";
    int edits = 20;
    int coldEdits = 5;
    std::string paths = "fast,agent,cold";
    std::string root = (fs::temp_directory_path() / "kwb-edit-loop").string();
    std::string jsonOut;
    int pauseMs = 1500;
    std::string device = "cuda";
    bool noStandby = false;
    app.add_option("--pause-ms", pauseMs,
                   "Pause before each edit: the time a person takes between a result and the next "
                   "save (the warm worker prepares the next evaluation meanwhile)");
    app.add_flag("--no-standby", noStandby, "Warm worker without standby children");
    app.add_option("--device", device, "cuda, or cpu to try the benchmark out without a GPU")
        ->check(CLI::IsMember({"cuda", "cpu"}));
    app.add_option("--task", taskId, "Bundled task id with a fast-path and a regular solution");
    app.add_option("--constant", constant, "Text in the kernel whose spelling each edit changes");
    app.add_option("--edits", edits, "Edits for the fast and agent loops");
    app.add_option("--cold-edits", coldEdits, "Edits for the cold loop (about 30 s each)");
    app.add_option("--paths", paths, "Comma-separated subset of fast,agent,cold");
    app.add_option("--root", root, "Scratch folder for the workspaces");
    app.add_option("--json", jsonOut, "Also write every sample to this file");
    CLI11_PARSE(app, argc, argv);

    const fs::path task = fs::path(kwb::bundledTasksDirectory()) / (taskId + ".py");
    const fs::path solutions = kwb::bundledSolutionsDirectory();
    kwb::Evaluator evaluator;
    json report = {{"task", taskId},
                   {"pause_ms", pauseMs},
                   {"standby", !noStandby},
                   {"paths", json::object()}};

    std::cout << "| path | edits | p50 s | p90 s | compile p50 s | verify p50 s | profile p50 s "
                 "| other p50 s | rewards |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const std::string path : {"fast", "agent", "cold"}) {
        if (paths.find(path) == std::string::npos)
            continue;
        const fs::path ws = fs::path(root) / path;
        fs::remove_all(ws);
        kwb::WorkspaceInitOptions init;
        init.fastPath = path == "fast";
        init.solutionDirectory =
            ((path == "fast" ? solutions.parent_path() / "solutions_fast" : solutions) / taskId)
                .string();
        init.overwrite = true;
        const auto created = kwb::initWorkspace(task.string(), ws.string(), init);
        if (!created.ok) {
            std::cerr << path << ": " << created.error << "\n";
            return 1;
        }
        fs::path kernel;
        for (const auto& entry : fs::directory_iterator(ws / "kernels"))
            if (entry.path().extension() == ".cu" &&
                readText(entry.path()).find(constant) != std::string::npos)
                kernel = entry.path();
        if (kernel.empty()) {
            std::cerr << path << ": no kernels/*.cu contains " << constant << "\n";
            return 1;
        }
        const std::string original = readText(kernel);

        kwb::EvaluationOptions options;
        options.device = device == "cpu" ? kwb::DeviceChoice::Cpu : kwb::DeviceChoice::Cuda;
        kwb::applyQuickFeedback(options); // the GUI's hand-edit loop's settings
        options.warmWorker = path != "cold";
        options.standby = !noStandby;
        // A cold evaluation shares nothing with the ones before it: the agent path builds the
        // same edited sources, and its cached extension would otherwise make this rebuild free.
        const std::string inheritedCache = kwb::cacheDirectory();
        auto useFreshCacheIfCold = [&](int edit) {
            if (path == "cold")
                setenv("KWB_CACHE_DIR",
                       (fs::path(root) / "cold-cache" / std::to_string(edit)).c_str(), 1);
        };
        // Warm-up, not counted: starts the worker, caches the baselines and the first build.
        // The cold path keeps none of that; its warm-up only brings torch and the toolchain
        // into the page cache, as on a machine that has run the scripts before.
        useFreshCacheIfCold(0);
        const Sample warm = measure(evaluator, ws, options);
        std::cerr << path << " warm-up: " << warm.total << " s, reward " << warm.reward << " "
                  << warm.failure << "\n";

        std::vector<Sample> samples;
        const int count = path == "cold" ? coldEdits : edits;
        for (int i = 0; i < count; ++i) {
            std::string edited = original;
            char spelling[64];
            std::snprintf(spelling, sizeof spelling, "%s%02d",
                          constant.substr(0, constant.size() - 1).c_str(), i + 1);
            edited.replace(edited.find(constant), constant.size(), std::string(spelling) + "f");
            std::this_thread::sleep_for(std::chrono::milliseconds(pauseMs));
            writeText(kernel, edited);
            if (path == "cold")
                fs::remove_all(ws / "build"); // a full rebuild, as a fresh CUDA-Agent sandbox
            useFreshCacheIfCold(i + 1);
            samples.push_back(measure(evaluator, ws, options));
            const Sample& s = samples.back();
            std::cerr << path << " edit " << i + 1 << ": " << s.total << " s (compile " << s.compile
                      << ", verify " << s.verify << ", profile " << s.profile << ") reward "
                      << s.reward << " " << s.failure
                      << (s.verifyPrepared ? " [verify prepared ahead]" : "")
                      << (s.profilePrepared ? " [profile prepared ahead]" : "") << "\n"
                      << s.phases;
        }
        writeText(kernel, original);
        setenv("KWB_CACHE_DIR", inheritedCache.c_str(), 1);

        auto column = [&](double Sample::*field) {
            std::vector<double> values;
            for (const auto& s : samples)
                values.push_back(s.*field);
            return values;
        };
        std::string rewards;
        json entries = json::array();
        for (const auto& s : samples) {
            rewards += std::to_string(s.reward) + " ";
            entries.push_back({{"total_s", s.total},
                               {"compile_s", s.compile},
                               {"verify_s", s.verify},
                               {"profile_s", s.profile},
                               {"reward", s.reward},
                               {"verify_prepared", s.verifyPrepared},
                               {"profile_prepared", s.profilePrepared},
                               {"speedup_vs_eager", s.speedupEager},
                               {"failure", s.failure}});
        }
        const auto totals = column(&Sample::total);
        std::printf("| %s | %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s|\n", path.c_str(),
                    samples.size(), percentile(totals, 0.5), percentile(totals, 0.9),
                    percentile(column(&Sample::compile), 0.5),
                    percentile(column(&Sample::verify), 0.5),
                    percentile(column(&Sample::profile), 0.5),
                    percentile(column(&Sample::other), 0.5), rewards.c_str());
        std::fflush(stdout);
        report["paths"][path] = {{"samples", entries},
                                 {"p50_s", percentile(totals, 0.5)},
                                 {"p90_s", percentile(totals, 0.9)},
                                 {"warmup_s", warm.total}};
    }
    if (!jsonOut.empty())
        std::ofstream(jsonOut) << report.dump(2);
    return 0;
}
