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
// same one: each writes a name of its own and renames it into place (atomic, and a blob that
// is already there has the same bytes), so nobody fails on "file exists" or reads half a blob.
void storeBlob(const std::string& bytes, const std::string& hash) {
    const fs::path target = blobPath(hash);
    fs::create_directories(target.parent_path());
    if (fs::exists(target))
        return;
    std::string error;
    if (!writeFileInside(target.parent_path(), hash, bytes, &error))
        throw fs::filesystem_error("cannot store a protected-file copy: " + error, target,
                                   std::make_error_code(std::errc::io_error));
}

std::string readWhole(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw fs::filesystem_error("cannot read", path,
                                   std::make_error_code(std::errc::no_such_file_or_directory));
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every file goes into the workspace through writeFileInside: re-initialising (--force) a
// workspace an agent has written must not follow a `model.py -> ~/.bashrc` it left there.
void place(const fs::path& workspace, const std::string& relative, const std::string& bytes,
           int mode = 0644) {
    std::string error;
    if (!writeFileInside(workspace, relative, bytes, &error, mode))
        throw fs::filesystem_error(error, workspace / relative,
                                   std::make_error_code(std::errc::io_error));
}

void copyInto(const fs::path& from, const fs::path& workspace, const std::string& relative) {
    const bool executable =
        (fs::status(from).permissions() & fs::perms::owner_exec) != fs::perms::none;
    place(workspace, relative, readWhole(from), executable ? 0755 : 0644);
}

void copyTree(const fs::path& from, const fs::path& workspace, const std::string& relativeTo) {
    for (const auto& entry : fs::recursive_directory_iterator(from)) {
        const std::string relative = fs::relative(entry.path(), from).generic_string();
        if (relative.find("__pycache__") != std::string::npos)
            continue;
        if (entry.is_directory())
            makeFolderInside(workspace, relativeTo + "/" + relative);
        else if (entry.is_regular_file())
            copyInto(entry.path(), workspace, relativeTo + "/" + relative);
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
        // Lexically: fs::relative resolves links, and would name a link by its target.
        const std::string relative = entry.path().lexically_relative(workspace).generic_string();
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

        fs::create_directories(dir);
        makeFolderInside(dir, "kernels");
        copyInto(task, dir, "model.py");
        for (const char* name : {"binding.cpp", "binding_registry.h"})
            copyInto(resources / "workspace" / name, dir, name);
        copyInto(templateDir / "SKILL.md", dir, "SKILL.md");
        fs::remove_all(dir / "utils"); // removes a link in its place, never what it points to
        copyTree(templateDir / "utils", dir, "utils");
        copyTree(resources / "harness" / "kwb_harness", dir, "utils/kwb_harness");
        // The fast-path runtime ships with every workspace, so either flavour can be chosen (or
        // switched to) by what model_new.py imports.
        copyTree(resources / "harness" / "kwb_kernels", dir, "utils/kwb_kernels");

        if (!options.solutionDirectory.empty()) {
            const fs::path solution = options.solutionDirectory;
            copyInto(solution / "model_new.py", dir, "model_new.py");
            if (fs::exists(solution / "kernels"))
                copyTree(solution / "kernels", dir, "kernels");
        } else {
            copyInto(templateDir / (options.fastPath ? "model_new_fast.py.in" : "model_new.py.in"),
                     dir, "model_new.py");
        }

        json manifest = {{"format", "kwb-workspace"},
                         {"version", kManifestVersion},
                         {"task", task.string()},
                         {"created_at", utcTimestamp()},
                         {"protected", json::object()}};
        for (const auto& relative : protectedFilesIn(dir)) {
            // What the workspace held before (--force) may be a link to a host file: it is
            // removed, never hashed or copied into the pristine store (a restore would bring the
            // host file into the workspace).
            const std::optional<std::string> bytes = readFileInside(dir, relative);
            if (!bytes) {
                removeFileInside(dir, relative);
                continue;
            }
            const std::string hash = sha256Hex(*bytes);
            manifest["protected"][relative] = hash;
            storeBlob(*bytes, hash);
            result.protectedFiles.push_back(relative);
        }
        fs::create_directories(manifestPath(dir).parent_path());
        std::ofstream(manifestPath(dir)) << manifest.dump(2);
        place(dir, ".kwb/workspace.json",
              json{{"format", "kwb-workspace-info"},
                   {"version", 1},
                   {"task", task.string()},
                   {"created_at", manifest["created_at"]},
                   {"note", "protected-file hashes are kept outside the workspace"}}
                  .dump(2));
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
