#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kwb {

// One task of a rollout's task set: a KernelBench-format module (a reference `Model`,
// `get_inputs()`, `get_init_inputs()`) as text, wherever it came from.
struct TaskSetEntry {
    std::string id;     // unique in its set: "level1/19_ReLU", a file stem, or "row-<n>"
    int level = 0;      // KernelBench's level (1-4); 0 when the source has none
    std::string source; // the module's text
    std::string origin; // where it was read: a path, or "<file>:<line>"
    // CUDA-Agent-Ops-6K's columns, when the set came from its rows.
    std::vector<std::string> ops;
    std::string dataSource;
    std::string contentHash; // SHA-256 of `source`
};

enum class TaskSetKind { KernelBench, Folder, JsonLines };
std::string toString(TaskSetKind kind); // "kernelbench", "folder", "jsonl"

struct TaskSet {
    TaskSetKind kind = TaskSetKind::Folder;
    std::string path;
    std::vector<TaskSetEntry> tasks; // sorted by level, then id
    // What was skipped and why (a row that is not JSON, a file without `class Model`).
    std::vector<std::string> problems;
    // SHA-256 over the sorted (id, content hash) pairs: two runs on the same hash saw the same
    // tasks, whatever the folder was called.
    std::string contentHash;
};

struct TaskSetLoad {
    bool ok = false;
    TaskSet set;
    std::string error; // why there is no set at all (missing path, unknown format, no task)
};

struct TaskSetOptions {
    std::size_t limit = 0;         // keep the first N tasks in order (0: all)
    std::vector<int> levels;       // keep only these KernelBench levels (empty: all)
    std::size_t maxTasks = 100000; // a JSONL file with more rows is refused, not read whole
};

// Reads a task set from `path`:
//  - a KernelBench checkout (a folder with level<N>/ subfolders, directly or under KernelBench/):
//    ids "level<N>/<file stem>", levels from the folders;
//  - a folder of task files (*.py with `class Model`);
//  - a .jsonl file of CUDA-Agent-Ops-6K rows ({"code", "ops", "data_source"}).
// Parquet needs pyarrow, which only the task Python has: a .parquet file is refused here with
// that reason, and converting it to JSON lines is the caller's step.
TaskSetLoad loadTaskSet(const std::string& path, const TaskSetOptions& options = {});

} // namespace kwb
