#include "engine/evaluation/integrity_evidence.h"

#include "engine/evaluation/json_field.h"

#include <cstdio>
#include <nlohmann/json.hpp>

using nlohmann::json;

namespace kwb {
namespace {

const json& object(const json& j, const char* key) {
    static const json empty = json::object();
    return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : empty;
}

std::map<std::string, int> countsFrom(const json& j) {
    std::map<std::string, int> counts;
    if (j.is_object())
        for (auto it = j.begin(); it != j.end(); ++it)
            if (it.value().is_number_integer())
                counts[it.key()] = it.value().get<int>();
    return counts;
}

std::string describeGpuState(const json& reading) {
    if (!jsonField(reading, "available", false))
        return {};
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "%d MHz SM, %d MHz memory, %d C",
                  jsonField(reading, "sm_clock_mhz", 0), jsonField(reading, "memory_clock_mhz", 0),
                  jsonField(reading, "temperature_c", 0));
    std::string text = buffer;
    for (const auto& reason : jsonField(reading, "slowdown", std::vector<std::string>{}))
        text += ", " + reason;
    return text;
}

void readCensus(IntegrityEvidence& e, const json& census) {
    e.kernelCensusAvailable = jsonField(census, "available", false);
    e.kernelCensusNote = jsonField<std::string>(census, "reason", "");
    e.kernelCensusSource = jsonField<std::string>(census, "source", "");
    e.customUs = jsonField(census, "custom_us", 0.0);
    e.libraryUs = jsonField(census, "library_us", 0.0);
    e.torchUs = jsonField(census, "torch_us", 0.0);
    e.otherUs = jsonField(census, "other_us", 0.0);
    e.sideStreamUs = jsonField(census, "side_stream_us", 0.0);
    e.kernels.clear();
    if (census.is_object() && census.contains("kernels") && census["kernels"].is_array())
        for (const auto& k : census["kernels"])
            e.kernels.push_back({jsonField<std::string>(k, "name", ""),
                                 jsonField<std::string>(k, "origin", "other"),
                                 jsonField(k, "calls", 0.0), jsonField(k, "total_us", 0.0),
                                 jsonField(k, "streams", std::vector<long long>{})});
}

} // namespace

double IntegrityEvidence::customShare() const {
    const double total = customUs + libraryUs + torchUs + otherUs;
    return total > 0 ? customUs / total : 0.0;
}

void absorbVerifyEvidence(IntegrityEvidence& e, const json& result) {
    e.extensionCalls = countsFrom(object(result, "extension_calls"));
    e.torchComputeOps = countsFrom(object(object(result, "torch_ops"), "compute"));
    const json& shape = object(result, "second_shape");
    e.secondShapeChecked = jsonField(shape, "checked", false);
    e.secondShapePassed = jsonField(shape, "passed", false);
    e.secondShape = e.secondShapeChecked ? jsonField<std::string>(shape, "description", "")
                                         : jsonField<std::string>(shape, "reason", "");
}

void absorbProfileEvidence(IntegrityEvidence& e, const json& result) {
    const json& integrity = object(result, "integrity");
    readCensus(e, object(integrity, "kernels"));
    const json& floor = object(integrity, "memory_floor");
    e.bytesMoved = jsonField(floor, "bytes_moved", 0.0);
    e.copyBandwidthGBs = jsonField(floor, "copy_bandwidth_gbs", 0.0);
    e.memoryFloorMs = jsonField(floor, "floor_ms", 0.0);
    e.memoryFloorApplies = jsonField(floor, "applies", false);
    e.timedOutputsChecked = jsonField(integrity, "timed_outputs_checked", 0);
    e.separateJudge = jsonField(result, "judge", std::string()) == "separate process";
    const json& external = object(integrity, "external_timing");
    e.externalTimingChecked = jsonField(external, "calls", 0) > 0;
    e.externalTimingConsistent =
        e.externalTimingChecked && jsonField(external, "consistent", false);
    e.externalWallMs = jsonField(external, "wall_ms", 0.0);
    e.externalUnexplainedMs = jsonField(external, "unexplained_ms", 0.0);
    e.externalAllowedMs = jsonField(external, "allowed_ms", 0.0);
    e.externalBatches = jsonField(external, "batches", 0);
    e.externalInconsistentBatches = jsonField(external, "inconsistent_batches", 0);
    e.externalWaitingMs = jsonField(external, "scheduler_wait_ms", 0.0);
    e.externalExcusedWaitMs = jsonField(external, "scheduler_wait_excused_ms", 0.0);
    const json& gpu = object(integrity, "gpu_state");
    e.gpuStateBefore = describeGpuState(object(gpu, "before"));
    e.gpuStateAfter = describeGpuState(object(gpu, "after"));
}

json toJson(const IntegrityEvidence& e) {
    json kernels = json::array();
    for (const auto& k : e.kernels)
        kernels.push_back({{"name", k.name},
                           {"origin", k.origin},
                           {"calls", k.callsPerForward},
                           {"total_us", k.microsecondsPerForward},
                           {"streams", k.streams}});
    return {{"kernels",
             {{"available", e.kernelCensusAvailable},
              {"reason", e.kernelCensusNote},
              {"source", e.kernelCensusSource},
              {"kernels", kernels},
              {"custom_us", e.customUs},
              {"library_us", e.libraryUs},
              {"torch_us", e.torchUs},
              {"other_us", e.otherUs},
              {"side_stream_us", e.sideStreamUs}}},
            {"extension_calls", e.extensionCalls},
            {"torch_compute_ops", e.torchComputeOps},
            {"memory_floor",
             {{"bytes_moved", e.bytesMoved},
              {"copy_bandwidth_gbs", e.copyBandwidthGBs},
              {"floor_ms", e.memoryFloorMs},
              {"applies", e.memoryFloorApplies}}},
            {"second_shape",
             {{"checked", e.secondShapeChecked},
              {"passed", e.secondShapePassed},
              {"description", e.secondShape}}},
            {"timed_outputs_checked", e.timedOutputsChecked},
            {"separate_judge", e.separateJudge},
            {"external_timing",
             {{"checked", e.externalTimingChecked},
              {"consistent", e.externalTimingConsistent},
              {"wall_ms", e.externalWallMs},
              {"unexplained_ms", e.externalUnexplainedMs},
              {"allowed_ms", e.externalAllowedMs},
              {"batches", e.externalBatches},
              {"inconsistent_batches", e.externalInconsistentBatches},
              {"scheduler_wait_ms", e.externalWaitingMs},
              {"scheduler_wait_excused_ms", e.externalExcusedWaitMs}}},
            {"gpu_state", {{"before", e.gpuStateBefore}, {"after", e.gpuStateAfter}}}};
}

IntegrityEvidence integrityFromJson(const json& j) {
    IntegrityEvidence e;
    readCensus(e, object(j, "kernels"));
    e.extensionCalls = countsFrom(object(j, "extension_calls"));
    e.torchComputeOps = countsFrom(object(j, "torch_compute_ops"));
    const json& floor = object(j, "memory_floor");
    e.bytesMoved = jsonField(floor, "bytes_moved", 0.0);
    e.copyBandwidthGBs = jsonField(floor, "copy_bandwidth_gbs", 0.0);
    e.memoryFloorMs = jsonField(floor, "floor_ms", 0.0);
    e.memoryFloorApplies = jsonField(floor, "applies", false);
    const json& shape = object(j, "second_shape");
    e.secondShapeChecked = jsonField(shape, "checked", false);
    e.secondShapePassed = jsonField(shape, "passed", false);
    e.secondShape = jsonField<std::string>(shape, "description", "");
    e.timedOutputsChecked = jsonField(j, "timed_outputs_checked", 0);
    e.separateJudge = jsonField(j, "separate_judge", false);
    const json& external = object(j, "external_timing");
    e.externalTimingChecked = jsonField(external, "checked", false);
    e.externalTimingConsistent = jsonField(external, "consistent", false);
    e.externalWallMs = jsonField(external, "wall_ms", 0.0);
    e.externalUnexplainedMs = jsonField(external, "unexplained_ms", 0.0);
    e.externalAllowedMs = jsonField(external, "allowed_ms", 0.0);
    e.externalBatches = jsonField(external, "batches", 0);
    e.externalInconsistentBatches = jsonField(external, "inconsistent_batches", 0);
    e.externalWaitingMs = jsonField(external, "scheduler_wait_ms", 0.0);
    e.externalExcusedWaitMs = jsonField(external, "scheduler_wait_excused_ms", 0.0);
    const json& gpu = object(j, "gpu_state");
    e.gpuStateBefore = jsonField<std::string>(gpu, "before", "");
    e.gpuStateAfter = jsonField<std::string>(gpu, "after", "");
    return e;
}

} // namespace kwb
