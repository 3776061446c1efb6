#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace kwb::diagnostics {

// An #include a kernel may not have, and where.
struct IncludeProblem {
    std::string file; // the source or header that has it
    int line = 0;
    std::string message;
};

// NVRTC and nvcc read every #include from disk with kwb's own rights, outside any sandbox, and
// quote what they parse in their diagnostics, which reach the agent and its model provider. A
// kernel (or a header it includes) may therefore include only by a relative name that stays
// inside `root` (the workspace, or the file's own folder), not through a link, and not by a
// macro (a computed include cannot be checked). Headers found inside `root` are checked in turn.
// `sourceFolder` is the folder of the file whose text is `source`.
std::optional<IncludeProblem> unsafeInclude(const std::string& source,
                                            const std::filesystem::path& sourceFolder,
                                            const std::filesystem::path& root,
                                            const std::string& sourceName);

// The root a kernel file's includes must stay in: its workspace when it lies in a `kernels`
// folder, else its own folder.
std::filesystem::path includeRootFor(const std::filesystem::path& kernelFile);

} // namespace kwb::diagnostics
