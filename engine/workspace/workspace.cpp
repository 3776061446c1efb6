#include "engine/workspace/workspace.h"

#include "engine/system/bounded_json.h"
#include "engine/system/content_hash.h"
#include "engine/system/resource_paths.h"
#include "engine/system/user_directories.h"
#include "engine/system/utc_timestamp.h"
#include "engine/workspace/contained_files.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kwb {
namespace {

constexpr int kManifestVersion = 1;

// The manifest and pristine copies live outside the workspace: an agent that can write
// anywhere in its workspace cannot forge the hashes it is checked against.
fs::path manifestPath(const fs::path& workspace) {
    const std::string key = sha256Hex(fs::weakly_canonical(workspace).string()).substr(0, 32);
    return fs::path(stateDirectory()) / "workspaces" / (key + ".json");
}

fs::path blobPath(const std::string& hash) {
    return fs::path(stateDirectory()) / "blobs" / hash;
}

// Blobs are named by their content, so workspaces initialised at the same time may store the
// same one: each copies to a name of its own and renames it into place (atomic, and a blob that
// is already there has the same bytes), so nobody fails on "file exists" or reads half a blob.
void storeBlob(const fs::path& source, const std::string& hash) {
    const fs::path target = blobPath(hash);
    fs::create_directories(target.parent_path());
    if (fs::exists(target))
        return;
    std::random_device device;
    const fs::path temporary = target.string() + ".tmp" + std::to_string(device());
    fs::copy_file(source, temporary);
    std::error_code ec;
    fs::rename(temporary, target, ec);
    if (ec) {
        fs::remove(temporary, ec);
        if (!fs::exists(target))
            throw fs::filesystem_error("cannot store a protected-file copy", source, target, ec);
    }
}

void copyTree(const fs::path& from, const fs::path& to) {
    fs::create_directories(to);
    for (const auto& entry : fs::recursive_directory_iterator(from)) {
        const fs::path relative = fs::relative(entry.path(), from);
        if (relative.string().find("__pycache__") != std::string::npos)
            continue;
        if (entry.is_directory())
            fs::create_directories(to / relative);
        else if (entry.is_regular_file())
            fs::copy_file(entry.path(), to / relative, fs::copy_options::overwrite_existing);
    }
}

std::vector<std::string> protectedFilesIn(const fs::path& workspace) {
    std::vector<std::string> files;
    std::error_code ec;
    // Links count as files here (never followed): a link at a protected path is something the
    // candidate added, and restoring removes it.
    for (const auto& entry : fs::recursive_directory_iterator(workspace, ec)) {
        const fs::file_type type = entry.symlink_status(ec).type();
        if (type != fs::file_type::regular && type != fs::file_type::symlink)
            continue;
        const std::string relative = fs::relative(entry.path(), workspace).generic_string();
        if (relative.find("__pycache__") != std::string::npos || relative.rfind("build/", 0) == 0)
            continue;
        if (isProtectedWorkspacePath(relative))
            files.push_back(relative);
    }
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace

bool isProtectedWorkspacePath(std::string_view relative) {
    return relative == "model.py" || relative.rfind("binding", 0) == 0 || relative == "utils" ||
           relative.rfind("utils/", 0) == 0;
}

WorkspaceInitResult initWorkspace(const std::string& taskPath, const std::string& directory,
                                  const WorkspaceInitOptions& options) {
    WorkspaceInitResult result;
    try {
        const fs::path task = fs::absolute(taskPath);
        if (!fs::is_regular_file(task)) {
            result.error = "task file not found: " + taskPath;
            return result;
        }
        const fs::path dir = fs::absolute(directory).lexically_normal();
        if (fs::exists(dir) && !fs::is_empty(dir) && !options.overwrite) {
            result.error = dir.string() + " exists and is not empty (use --force to overwrite)";
            return result;
        }
        const fs::path resources = resourceRoot();
        const fs::path templateDir = resources / "workspace_template";
        for (const fs::path& needed :
             {resources / "workspace" / "binding.cpp",
              resources / "workspace" / "binding_registry.h", templateDir / "SKILL.md",
              resources / "harness" / "kwb_harness"})
            if (!fs::exists(needed)) {
                result.error = "incomplete installation: missing " + needed.string();
                return result;
            }

        fs::create_directories(dir / "kernels");
        fs::copy_file(task, dir / "model.py", fs::copy_options::overwrite_existing);
        for (const char* name : {"binding.cpp", "binding_registry.h"})
            fs::copy_file(resources / "workspace" / name, dir / name,
                          fs::copy_options::overwrite_existing);
        fs::copy_file(templateDir / "SKILL.md", dir / "SKILL.md",
                      fs::copy_options::overwrite_existing);
        fs::remove_all(dir / "utils");
        copyTree(templateDir / "utils", dir / "utils");
        copyTree(resources / "harness" / "kwb_harness", dir / "utils" / "kwb_harness");
        // The fast-path runtime ships with every workspace, so either flavour can be chosen (or
        // switched to) by what model_new.py imports.
        copyTree(resources / "harness" / "kwb_kernels", dir / "utils" / "kwb_kernels");

        if (!options.solutionDirectory.empty()) {
            const fs::path solution = options.solutionDirectory;
            fs::copy_file(solution / "model_new.py", dir / "model_new.py",
                          fs::copy_options::overwrite_existing);
            if (fs::exists(solution / "kernels"))
                copyTree(solution / "kernels", dir / "kernels");
        } else {
            fs::copy_file(templateDir /
                              (options.fastPath ? "model_new_fast.py.in" : "model_new.py.in"),
                          dir / "model_new.py", fs::copy_options::overwrite_existing);
        }

        json manifest = {{"format", "kwb-workspace"},
                         {"version", kManifestVersion},
                         {"task", task.string()},
                         {"created_at", utcTimestamp()},
                         {"protected", json::object()}};
        for (const auto& relative : protectedFilesIn(dir)) {
            const std::string hash = sha256OfFile((dir / relative).string());
            manifest["protected"][relative] = hash;
            storeBlob(dir / relative, hash);
            result.protectedFiles.push_back(relative);
        }
        fs::create_directories(manifestPath(dir).parent_path());
        std::ofstream(manifestPath(dir)) << manifest.dump(2);
        fs::create_directories(dir / ".kwb");
        std::ofstream(dir / ".kwb" / "workspace.json")
            << json{{"format", "kwb-workspace-info"},
                    {"version", 1},
                    {"task", task.string()},
                    {"created_at", manifest["created_at"]},
                    {"note", "protected-file hashes are kept outside the workspace"}}
                   .dump(2);
        result.ok = true;
        result.directory = dir.string();
    } catch (const fs::filesystem_error& error) {
        result.error = error.what();
    }
    return result;
}

std::string ProtectedFilesCheck::describe() const {
    if (!manifestFound)
        return error.empty() ? "no protected-file manifest for this workspace (create it with `kwb "
                               "workspace init`)"
                             : error;
    std::string text;
    auto list = [&](const char* label, const std::vector<std::string>& files) {
        if (files.empty())
            return;
        text += text.empty() ? "" : "; ";
        text += label;
        for (size_t i = 0; i < files.size(); ++i)
            text += (i ? ", " : " ") + files[i];
    };
    list("modified:", modified);
    list("missing:", missing);
    list("added:", added);
    if (text.empty())
        return "protected files unchanged";
    return "protected files changed (" + text + ")" +
           (restored ? "; restored from the pristine copies" : "");
}

ProtectedFilesCheck checkAndRestoreProtectedFiles(const std::string& directory) {
    ProtectedFilesCheck check;
    const fs::path dir = fs::absolute(directory).lexically_normal();
    std::ifstream in(manifestPath(dir));
    if (!in)
        return check;
    json manifest = parseBoundedJson(in);
    if (manifest.is_discarded() || manifest.value("format", "") != "kwb-workspace" ||
        !manifest.contains("protected")) {
        check.error = "the protected-file manifest of " + dir.string() + " is unreadable";
        return check;
    }
    check.manifestFound = true;
    const json& expected = manifest["protected"];
    // Read and restored without following links: a planted `utils -> elsewhere` must neither
    // pass the check with files from elsewhere nor lead the restore outside the workspace.
    for (const auto& [relative, hashValue] : expected.items()) {
        const std::string hash = hashValue.get<std::string>();
        const std::optional<std::string> bytes = readFileInside(dir, relative);
        if (!bytes)
            check.missing.push_back(relative);
        else if (sha256Hex(*bytes) != hash)
            check.modified.push_back(relative);
    }
    for (const auto& relative : protectedFilesIn(dir))
        if (!expected.contains(relative) || !isRegularFileInside(dir, relative))
            if (std::find(check.missing.begin(), check.missing.end(), relative) ==
                check.missing.end())
                check.added.push_back(relative);

    if (check.clean())
        return check;
    bool allRestored = true;
    // Links and added files go first, so a restored file never lands behind a link.
    for (const auto& relative : check.added)
        allRestored &= removeFileInside(dir, relative);
    for (const auto* list : {&check.modified, &check.missing})
        for (const auto& relative : *list) {
            std::ifstream blob(blobPath(expected[relative].get<std::string>()), std::ios::binary);
            const std::string bytes((std::istreambuf_iterator<char>(blob)),
                                    std::istreambuf_iterator<char>());
            allRestored &=
                blob.good() || blob.eof() ? writeFileInside(dir, relative, bytes) : false;
        }
    check.restored = allRestored;
    return check;
}

bool isWorkspace(const std::string& directory) {
    return fs::is_regular_file(fs::path(directory) / "model.py") &&
           fs::is_regular_file(fs::path(directory) / "model_new.py");
}

} // namespace kwb
