// A stage's result file, which the stage process (and so, today, candidate code) writes: the
// engine's reading of it must never crash, whatever the bytes.
#include "engine/evaluation/evaluation_result.h"
#include "engine/evaluation/harness_stage.h"
#include "engine/system/bounded_json.h"
#include "tests/fuzz/fuzz_input.h"

#include <filesystem>

using namespace kwb;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path file = kwb::fuzz::asScratchFile("result", "", data, size);
    for (const char* stage : {"inspect", "compile", "verify", "profile"}) {
        HarnessStageSpec spec;
        spec.stage = stage;
        ProcessResult process;
        process.started = true;
        process.exitedNormally = true;
        process.exitCode = 0;
        (void)interpretStageRun(spec, process, file, {});
    }
    const nlohmann::json json = parseBoundedJson(kwb::fuzz::asText(data, size));
    if (!json.is_discarded()) {
        EvaluationResult result;
        if (fromJson(json, result))
            (void)toJson(result).dump();
    }
    return 0;
}
