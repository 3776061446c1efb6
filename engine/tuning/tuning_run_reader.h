#pragma once

#include "engine/timeline/record_file_tail.h"
#include "engine/tuning/sample_figures.h"

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kwb {

// One training step of a tuning run as its files tell it: the step's figures (steps.jsonl),
// the policy update's, and the rewards of the step's samples (samples.jsonl), whose spread the
// view draws.
struct TuningStepPoint {
    int step = 0;
    int samples = 0;
    double meanReward = 0, passRate = 0, fasterThanCompile = 0, speedupVsEager = 0;
    double loss = 0, approximateKl = 0, entropy = 0, clipFraction = 0, tokensPerSecond = 0;
    std::vector<int> rewards; // the milestone reward of each of the step's samples
};

// One scored action.
struct TuningSampleRow {
    std::string phase; // start, random, train, final
    int step = 0;
    std::string space, action, verdict;
    int reward = -1;
    bool correct = false;
    bool measured = true; // false: the evaluation failed as infrastructure (no reward)
    double speedupVsEager = 0, speedupVsCompile = 0;
};

// A phase's figures on one space (before training, the random baseline, after training).
struct TuningPhaseFigures {
    std::string space;
    bool heldOut = false;
    std::string phase;
    int samples = 0;
    double meanReward = 0, passRate = 0, fasterThanCompile = 0, speedupVsEager = 0;
};

// What a tuning run's folder (`kwb train tune --out`) holds at one moment. Immutable once made.
struct TuningRunSnapshot {
    std::string folder;
    std::vector<TuningStepPoint> steps;
    std::vector<TuningSampleRow> samples; // in the order they were scored
    std::vector<TuningPhaseFigures> phases;
    std::vector<std::string> trainSpaces, heldOutSpaces;
    int plannedSteps = 0;
    bool finished = false;   // summary.json is written
    bool stopped = false;    // ... and says the run was stopped
    bool checkpoint = false; // checkpoint.pt is there (a stopped run resumes from it)
    std::string error;       // a file that cannot be read as the run writes it
    int skippedLines = 0;    // malformed lines passed over
};
using TuningRunSnapshotPtr = std::shared_ptr<const TuningRunSnapshot>;

// Reads a tuning run's folder as it grows: each read takes only the lines appended since the
// last one (a line being written is left for the next read), so a view can follow a run of
// thousands of samples once a second.
class TuningRunReader {
public:
    explicit TuningRunReader(std::string folder);
    TuningRunSnapshotPtr read();
    const std::string& folder() const { return folder_; }

private:
    // The rows of the complete lines `tail` gained since the last read (malformed ones counted
    // in skippedLines).
    std::vector<nlohmann::json> newRows(timeline::RecordFileTail& tail);
    // Forgets what the two files gave (steps, samples, the phases' figures), to read both again
    // from their start; the run's settings stay.
    void startOver();
    void addSample(const nlohmann::json& row);
    void addStep(const nlohmann::json& row);

    std::string folder_;
    timeline::RecordFileTail samplesTail_, stepsTail_;
    // (space, phase) -> figures of every sample of that phase read so far
    std::map<std::pair<std::string, std::string>, SampleFigures> phaseFigures_;
    TuningRunSnapshot state_;
};

} // namespace kwb
