#pragma once

#include <string>
#include <vector>

namespace kwb {

// One KernelBench-format task file: a reference `Model`, `get_inputs()` and
// `get_init_inputs()`. The metadata is read from the module docstring without running Python,
// so browsing tasks is instant and safe.
struct TaskInfo {
    std::string path;
    std::string id;          // file stem, e.g. "05_gemm_bias_relu"
    std::string title;       // first docstring line, or the id
    std::string description; // rest of the docstring, without the Category line
    std::string category;    // "Category: ..." line of the docstring; "uncategorized" if absent
    std::string solutionDirectory; // bundled reference ModelNew, empty when none
};

// Whether Python source defines the reference `class Model` at top level (what makes a file a
// KernelBench task), read without running it.
bool definesModelClass(const std::string& source);

// Reads one task file; `error` explains why it is not a task (unreadable, no `class Model`).
TaskInfo readTaskInfo(const std::string& path, std::string* error = nullptr);

// Every *.py task in a folder, sorted by file name. Files that are not tasks are skipped and
// named in `problems`.
std::vector<TaskInfo> listTasks(const std::string& directory,
                                std::vector<std::string>* problems = nullptr);

} // namespace kwb
