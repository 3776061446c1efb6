#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace kwb {

// One kernel seen by the profiler during the candidate's forward pass. `origin` says whose it
// is: "custom" (declared in the workspace), "library" (cuBLAS, cuDNN, CUTLASS: allowed),
// "torch" (torch's own), "other" or "transfer" (memcpy / memset).
struct KernelUsage {
    std::string name;
    std::string origin;
    double callsPerForward = 0;
    double microsecondsPerForward = 0;
    std::vector<long long> streams;
};

// The evidence behind the integrity flags, kept so that a reader (the GUI, an RL export) can
// show why a candidate was or was not trusted, not only the verdict.
// IntegrityEvidence::kernelCensusSource of a census the candidate could not forge.
inline constexpr const char* kSealedKernelRecords = "sealed kernel records";

struct IntegrityEvidence {
    // GPU only: which kernels ran, and how the GPU time divides between their origins.
    bool kernelCensusAvailable = false;
    std::string kernelCensusNote; // why not, where unavailable
    // Where the census came from: "sealed kernel records" (the CUPTI injection library's
    // records, sealed with the judge's key, placed in the judge's own windows around every batch
    // of calls) or "candidate process" (torch's profiler in the candidate's process, whose reply
    // the candidate could rewrite: evidence that can only add flags).
    std::string kernelCensusSource;
    std::vector<KernelUsage> kernels;
    double customUs = 0, libraryUs = 0, torchUs = 0, otherUs = 0, sideStreamUs = 0;

    // CPU and GPU: calls into the compiled extension during forward, torch operators seen by
    // the dispatcher guard.
    std::map<std::string, int> extensionCalls;
    std::map<std::string, int> torchComputeOps;

    // The memory-bandwidth floor for this task on this device.
    double bytesMoved = 0;
    double copyBandwidthGBs = 0;
    double memoryFloorMs = 0;
    bool memoryFloorApplies = false;

    // Verification on a second, derived input shape.
    bool secondShapeChecked = false;
    bool secondShapePassed = false;
    std::string secondShape; // "batch_size 4096 -> 2049", or why it was not checked

    int timedOutputsChecked = 0;

    // The judge (reference outputs, comparisons, verdict) ran in a process of its own that never
    // imported the candidate; its clock around the candidate's timed batches cross-checked the
    // times the candidate's process reported.
    bool separateJudge = false;
    bool externalTimingChecked = false;
    bool externalTimingConsistent = false;
    double externalWallMs = 0;        // the judge's clock around all timed batches
    double externalUnexplainedMs = 0; // of that, not explained by the reported times
    double externalAllowedMs = 0;     // what the tolerances allow of it
    int externalBatches = 0;
    int externalInconsistentBatches = 0; // batches with more unexplained time than allowed
    double externalWaitingMs = 0; // the candidate's and the judge's run-queue waits in the batches
    double externalExcusedWaitMs = 0; // of that, the share outside the reported calls, excused
    std::string gpuStateBefore;       // "1980 MHz SM, 41 C"; empty where NVML is unavailable
    std::string gpuStateAfter;

    double customShare() const; // of the kernels' GPU time, 0..1; 0 without a census
};

nlohmann::json toJson(const IntegrityEvidence& evidence);
IntegrityEvidence integrityFromJson(const nlohmann::json& json);

// Fill the evidence from the harness's stage results (same field names as the harness writes).
void absorbVerifyEvidence(IntegrityEvidence& evidence, const nlohmann::json& verifyResult);
void absorbProfileEvidence(IntegrityEvidence& evidence, const nlohmann::json& profileResult);

} // namespace kwb
