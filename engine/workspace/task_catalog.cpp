#include "engine/workspace/task_catalog.h"

#include "engine/system/resource_paths.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace kwb {
namespace {

std::string trim(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        return {};
    const auto last = text.find_last_not_of(" \t\r\n");
    return text.substr(first, last - first + 1);
}

// The module docstring: the first statement, when it is a triple-quoted string.
std::string moduleDocstring(const std::string& source) {
    std::size_t pos = 0;
    while (pos < source.size()) {
        pos = source.find_first_not_of(" \t\r\n", pos);
        if (pos == std::string::npos)
            return {};
        if (source[pos] != '#')
            break;
        pos = source.find('\n', pos);
    }
    for (const char* quote : {"\"\"\"", "'''"}) {
        if (source.compare(pos, 3, quote) == 0) {
            auto end = source.find(quote, pos + 3);
            if (end != std::string::npos)
                return source.substr(pos + 3, end - pos - 3);
        }
    }
    return {};
}

} // namespace

bool definesModelClass(const std::string& source) {
    static const std::regex modelClass(R"((^|\n)class\s+Model\s*[\(:])");
    return std::regex_search(source, modelClass);
}

TaskInfo readTaskInfo(const std::string& path, std::string* error) {
    TaskInfo info;
    info.path = fs::absolute(path).lexically_normal().string();
    info.id = fs::path(path).stem().string();
    std::ifstream in(path);
    if (!in) {
        if (error)
            *error = "cannot read " + path;
        return {};
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string source = buffer.str();
    if (!definesModelClass(source)) {
        if (error)
            *error = path + ": no `class Model` (not a KernelBench task)";
        return {};
    }

    std::istringstream doc(moduleDocstring(source));
    std::string line, description;
    bool first = true;
    while (std::getline(doc, line)) {
        std::string t = trim(line);
        if (first && !t.empty()) {
            info.title = t;
            first = false;
        } else if (t.rfind("Category:", 0) == 0) {
            info.category = trim(t.substr(9));
        } else if (!first) {
            description += t + "\n";
        }
    }
    info.description = trim(description);
    if (info.title.empty())
        info.title = info.id;
    if (info.category.empty())
        info.category = "uncategorized";

    fs::path solution = fs::path(bundledSolutionsDirectory()) / info.id;
    std::error_code ec;
    const bool bundled =
        fs::equivalent(fs::path(info.path).parent_path(), bundledTasksDirectory(), ec);
    if (bundled && fs::exists(solution / "model_new.py", ec))
        info.solutionDirectory = solution.string();
    return info;
}

std::vector<TaskInfo> listTasks(const std::string& directory, std::vector<std::string>* problems) {
    std::vector<TaskInfo> tasks;
    std::error_code ec;
    if (!fs::is_directory(directory, ec)) {
        if (problems)
            problems->push_back(directory + " is not a folder");
        return tasks;
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(directory, ec))
        if (entry.is_regular_file() && entry.path().extension() == ".py")
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        std::string error;
        TaskInfo info = readTaskInfo(file.string(), &error);
        if (!info.id.empty())
            tasks.push_back(std::move(info));
        else if (problems)
            problems->push_back(error);
    }
    return tasks;
}

} // namespace kwb
