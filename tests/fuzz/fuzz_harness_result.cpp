// A stage's result file, which the stage process (and so, today, candidate code) writes: the
// engine's reading of it must never crash, whatever the bytes.
#include "engine/evaluation/evaluation_result.h"
#include "engine/evaluation/harness_stage.h"
#include "engine/system/bounded_json.h"
#include "tests/fuzz/fuzz_input.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace kwb;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path file =
        std::filesystem::temp_directory_path() / ("kwb-fuzz-result-" + std::to_string(getpid()));
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
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
