// A task file (KernelBench format) as the catalog reads it, without running Python.
#include "engine/workspace/task_catalog.h"
#include "tests/fuzz/fuzz_input.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                              ("kwb-fuzz-task-" + std::to_string(getpid()) + ".py");
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    std::string error;
    (void)kwb::readTaskInfo(file.string(), &error);
    return 0;
}
