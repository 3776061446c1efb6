// A task file (KernelBench format) as the catalog reads it, without running Python.
#include "engine/workspace/task_catalog.h"
#include "tests/fuzz/fuzz_input.h"

#include <filesystem>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path file = kwb::fuzz::asScratchFile("task", ".py", data, size);
    std::string error;
    (void)kwb::readTaskInfo(file.string(), &error);
    return 0;
}
