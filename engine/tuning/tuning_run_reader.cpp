#include "engine/tuning/tuning_run_reader.h"

#include "engine/tuning/sample_figures.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace kwb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// What a reader keeps of a run's samples: enough for the table of recent ones. The figures of
// every sample are kept in the steps and phases whatever this says.
constexpr std::size_t kKeptSamples = 5000;

std::vector<std::string> stringList(const json& config, const char* key) {
    std::vector<std::string> names;
    if (const auto found = config.find(key); found != config.end() && found->is_array())
        for (const json& name : *found)
            if (name.is_string())
                names.push_back(name.get<std::string>());
    return names;
}

} // namespace

TuningRunReader::TuningRunReader(std::string folder)
    : folder_(std::move(folder)), samplesTail_((fs::path(folder_) / "samples.jsonl").string()),
      stepsTail_((fs::path(folder_) / "steps.jsonl").string()) {
    state_.folder = folder_;
}

std::vector<json> TuningRunReader::newRows(timeline::RecordFileTail& tail) {
    std::vector<json> rows;
    tail.poll([&](std::string_view line) {
        if (line.empty())
            return;
        json row = json::parse(line, nullptr, false);
        if (row.is_object())
            rows.push_back(std::move(row));
        else
            ++state_.skippedLines;
    });
    return rows;
}

void TuningRunReader::startOver() {
    samplesTail_.startOver();
    stepsTail_.startOver();
    phaseFigures_.clear();
    state_.steps.clear();
    state_.samples.clear();
    state_.skippedLines = 0;
}

void TuningRunReader::addSample(const json& row) {
    TuningSampleRow sample;
    sample.phase = row.value("phase", "");
    sample.step = row.value("step", 0);
    sample.space = row.value("space", "");
    sample.action = row.value("action", "");
    const TuningScore score = tuningScoreFromRow(row);
    sample.verdict = score.measured ? score.verdict : score.error;
    sample.reward = score.reward;
    sample.correct = score.correct;
    sample.measured = score.measured;
    sample.speedupVsEager = score.speedupVsEager;
    sample.speedupVsCompile = score.speedupVsCompile;
    if (sample.phase != "train" && score.measured)
        phaseFigures_[{sample.space, sample.phase}].add(sample.action, score, score.reward);
    if (sample.phase == "train" && score.measured) {
        auto point = std::find_if(state_.steps.begin(), state_.steps.end(),
                                  [&](const TuningStepPoint& p) { return p.step == sample.step; });
        if (point == state_.steps.end()) {
            // The step's samples come before its line in steps.jsonl.
            state_.steps.push_back({});
            point = std::prev(state_.steps.end());
            point->step = sample.step;
        }
        point->rewards.push_back(score.reward);
    }
    state_.samples.push_back(std::move(sample));
    if (state_.samples.size() > kKeptSamples)
        state_.samples.erase(state_.samples.begin(),
                             state_.samples.begin() +
                                 static_cast<std::ptrdiff_t>(state_.samples.size() - kKeptSamples));
}

void TuningRunReader::addStep(const json& row) {
    const int step = row.value("step", 0);
    auto point = std::find_if(state_.steps.begin(), state_.steps.end(),
                              [&](const TuningStepPoint& p) { return p.step == step; });
    if (point == state_.steps.end()) {
        state_.steps.push_back({});
        point = std::prev(state_.steps.end());
        point->step = step;
    }
    point->samples = row.value("samples", 0);
    point->meanReward = row.value("mean_reward", 0.0);
    point->passRate = row.value("pass_rate", 0.0);
    point->fasterThanCompile = row.value("faster_than_compile", 0.0);
    point->speedupVsEager = row.value("speedup_vs_eager", 0.0);
    const json update = row.value("update", json::object());
    point->loss = update.value("loss", 0.0);
    point->approximateKl = update.value("approximate_kl", 0.0);
    point->entropy = update.value("entropy", 0.0);
    point->clipFraction = update.value("clip_fraction", 0.0);
    point->tokensPerSecond = update.value("tokens_per_second", 0.0);
}

TuningRunSnapshotPtr TuningRunReader::read() {
    state_.error.clear();
    std::error_code ec;
    if (!fs::is_directory(folder_, ec)) {
        auto missing = std::make_shared<TuningRunSnapshot>(state_);
        missing->error = folder_ + " is not a folder";
        return missing;
    }
    if (state_.trainSpaces.empty() && state_.heldOutSpaces.empty()) {
        std::ifstream in(fs::path(folder_) / "config.json");
        const json config = in ? json::parse(in, nullptr, false) : json();
        if (config.is_object()) {
            state_.trainSpaces = stringList(config, "train");
            state_.heldOutSpaces = stringList(config, "held_out");
            state_.plannedSteps = config.value("steps", 0);
        }
    }
    const std::uint64_t restartsBefore = samplesTail_.restarts() + stepsTail_.restarts();
    std::vector<json> samples = newRows(samplesTail_), steps = newRows(stepsTail_);
    if (samplesTail_.restarts() + stepsTail_.restarts() != restartsBefore) {
        // A resumed run renames a fresh samples.jsonl, with the rows still valid, over the old
        // one: what was summed from the old one is read again from the new one.
        startOver();
        samples = newRows(samplesTail_);
        steps = newRows(stepsTail_);
    }
    for (const json& row : samples)
        addSample(row);
    for (const json& row : steps)
        addStep(row);
    std::sort(state_.steps.begin(), state_.steps.end(),
              [](const TuningStepPoint& a, const TuningStepPoint& b) { return a.step < b.step; });

    // The phases' figures from every sample read so far (the summary has them only at the end).
    state_.phases.clear();
    for (const auto& [key, f] : phaseFigures_) {
        TuningPhaseFigures phase;
        phase.space = key.first;
        phase.phase = key.second;
        phase.heldOut = std::find(state_.heldOutSpaces.begin(), state_.heldOutSpaces.end(),
                                  key.first) != state_.heldOutSpaces.end();
        phase.samples = f.samples;
        phase.meanReward = f.meanReward();
        phase.passRate = f.passRate();
        phase.fasterThanCompile = f.fasterThanCompileShare();
        phase.speedupVsEager = f.speedupVsEager();
        state_.phases.push_back(std::move(phase));
    }

    std::ifstream summaryFile(fs::path(folder_) / "summary.json");
    const json summary = summaryFile ? json::parse(summaryFile, nullptr, false) : json();
    state_.finished = summary.is_object();
    state_.stopped = state_.finished && summary.value("stopped", false);
    state_.checkpoint = fs::exists(fs::path(folder_) / "checkpoint.pt", ec);
    return std::make_shared<const TuningRunSnapshot>(state_);
}

} // namespace kwb
