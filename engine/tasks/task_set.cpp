#include "engine/tasks/task_set.h"

#include "engine/system/bounded_json.h"
#include "engine/system/content_hash.h"
#include "engine/workspace/task_catalog.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace kwb {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::size_t kMaxTaskBytes = 4u << 20; // a task module; real ones are a few KB

bool readFile(const fs::path& path, std::string& text) {
    std::error_code ec;
    if (fs::file_size(path, ec) > kMaxTaskBytes || ec)
        return false;
    std::ifstream in(path, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
    return static_cast<bool>(in) || in.eof();
}

// *.py files of `folder` that define `class Model`, as entries with `idPrefix` before the stem.
void addFolder(const fs::path& folder, const std::string& idPrefix, int level, TaskSet& set) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
        // Links are not followed: a task set names files, it does not reach elsewhere.
        if (entry.is_regular_file() && !entry.is_symlink() && entry.path().extension() == ".py")
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
        TaskSetEntry task;
        if (!readFile(file, task.source)) {
            set.problems.push_back(file.string() + ": unreadable or larger than 4 MiB");
            continue;
        }
        if (!definesModelClass(task.source)) {
            if (file.filename() != "__init__.py")
                set.problems.push_back(file.string() + ": no `class Model`, not a task");
            continue;
        }
        task.id = idPrefix + file.stem().string();
        task.level = level;
        task.origin = file.string();
        set.tasks.push_back(std::move(task));
    }
}

// level<N> folders of a KernelBench checkout, or of its KernelBench/ subfolder.
std::vector<std::pair<int, fs::path>> kernelBenchLevels(const fs::path& root) {
    static const std::regex levelName(R"(level(\d{1,2}))");
    for (const fs::path& base : {root, root / "KernelBench"}) {
        std::vector<std::pair<int, fs::path>> levels;
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(base, ec)) {
            std::smatch m;
            const std::string name = entry.path().filename().string();
            if (entry.is_directory() && !entry.is_symlink() && std::regex_match(name, m, levelName))
                levels.emplace_back(std::stoi(m[1].str()), entry.path());
        }
        if (!levels.empty()) {
            std::sort(levels.begin(), levels.end());
            return levels;
        }
    }
    return {};
}

void addJsonLines(const fs::path& file, const TaskSetOptions& options, TaskSet& set,
                  std::string& error) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        error = "cannot read " + file.string();
        return;
    }
    std::string line;
    std::size_t number = 0;
    std::size_t rows = 0;
    const JsonLimits limits{.maxBytes = kMaxTaskBytes, .maxDepth = 16};
    while (std::getline(in, line)) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        if (++rows > options.maxTasks) {
            error = file.string() + " has more than " + std::to_string(options.maxTasks) +
                    " rows; use --limit";
            return;
        }
        const std::string where = file.filename().string() + ":" + std::to_string(number);
        std::string why;
        const json row = parseBoundedJson(line, limits, &why);
        if (row.is_discarded() || !row.is_object()) {
            set.problems.push_back(where + ": not a JSON object (" + why + ")");
            continue;
        }
        TaskSetEntry task;
        task.source = stringOr(row, "code");
        if (task.source.empty() || !definesModelClass(task.source)) {
            set.problems.push_back(where + ": \"code\" holds no task module with `class Model`");
            continue;
        }
        task.id = "row-" + std::to_string(number);
        task.origin = where;
        task.dataSource = stringOr(row, "data_source");
        task.level = intOr(row, "level", 0);
        if (const auto ops = row.find("ops"); ops != row.end()) {
            // Ops-6K stores the list as JSON text; some exports keep it as an array.
            json list = ops->is_string() ? parseBoundedJson(ops->get<std::string>(), limits) : *ops;
            if (list.is_array())
                for (const json& op : list)
                    if (op.is_string())
                        task.ops.push_back(op.get<std::string>());
        }
        set.tasks.push_back(std::move(task));
    }
}

} // namespace

std::string toString(TaskSetKind kind) {
    switch (kind) {
    case TaskSetKind::KernelBench:
        return "kernelbench";
    case TaskSetKind::JsonLines:
        return "jsonl";
    case TaskSetKind::Folder:
        break;
    }
    return "folder";
}

TaskSetLoad loadTaskSet(const std::string& path, const TaskSetOptions& options) {
    TaskSetLoad out;
    TaskSet& set = out.set;
    std::error_code ec;
    const fs::path root = fs::absolute(path, ec).lexically_normal();
    set.path = root.string();
    if (!fs::exists(root, ec)) {
        out.error = path + " does not exist";
        return out;
    }
    if (fs::is_directory(root, ec)) {
        const auto levels = kernelBenchLevels(root);
        if (!levels.empty()) {
            set.kind = TaskSetKind::KernelBench;
            for (const auto& [level, folder] : levels)
                addFolder(folder, "level" + std::to_string(level) + "/", level, set);
        } else {
            set.kind = TaskSetKind::Folder;
            addFolder(root, "", 0, set);
        }
    } else if (root.extension() == ".jsonl" || root.extension() == ".json") {
        set.kind = TaskSetKind::JsonLines;
        addJsonLines(root, options, set, out.error);
        if (!out.error.empty())
            return out;
    } else if (root.extension() == ".parquet") {
        out.error = path + " is a parquet file: convert it to JSON lines with the task Python's "
                           "pyarrow first";
        return out;
    } else {
        out.error = path + " is neither a folder of task files, a KernelBench checkout nor a "
                           ".jsonl file of task rows";
        return out;
    }
    if (!options.levels.empty())
        std::erase_if(set.tasks, [&](const TaskSetEntry& t) {
            return std::find(options.levels.begin(), options.levels.end(), t.level) ==
                   options.levels.end();
        });
    std::stable_sort(set.tasks.begin(), set.tasks.end(), [](const auto& a, const auto& b) {
        return a.level != b.level ? a.level < b.level : a.id < b.id;
    });
    if (options.limit > 0 && set.tasks.size() > options.limit)
        set.tasks.resize(options.limit);
    if (set.tasks.empty()) {
        out.error = "no task in " + path +
                    (set.problems.empty() ? std::string() : " (" + set.problems.front() + ")");
        return out;
    }
    std::string material = "kwb-task-set/1\n";
    for (TaskSetEntry& task : set.tasks) {
        task.contentHash = sha256Hex(task.source);
        material += task.id + " " + task.contentHash + "\n";
    }
    set.contentHash = sha256Hex(material);
    out.ok = true;
    return out;
}

} // namespace kwb
