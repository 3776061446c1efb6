// Re-initialising a workspace (--force) that an agent has written: kwb writes every file without
// following a link left there, and a link at a protected path never enters the pristine store.
#include "engine/system/resource_paths.h"
#include "engine/workspace/workspace.h"
#include "tests/test_files.h"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace kwb;
using namespace kwb::test;
namespace fs = std::filesystem;

TEST(WorkspaceInit, ReinitialisingNeverWritesThroughPlantedLinks) {
    const fs::path base = fs::temp_directory_path() / ("kwb-ws-init-" + std::to_string(getpid()));
    fs::remove_all(base);
    const fs::path ws = base / "ws", outside = base / "outside";
    fs::create_directories(outside / "elsewhere");
    writeText(outside / "bashrc", "the user's own file");
    writeText(outside / "secret", "host secret");
    const std::string task =
        (fs::path(bundledTasksDirectory()) / "07_scale_residual_add.py").string();
    WorkspaceInitOptions options;
    options.solutionDirectory =
        (fs::path(bundledSolutionsDirectory()) / "07_scale_residual_add").string();
    ASSERT_TRUE(initWorkspace(task, ws.string(), options).ok);

    fs::remove(ws / "model.py");
    fs::create_symlink(outside / "bashrc", ws / "model.py");
    fs::remove_all(ws / "kernels");
    fs::create_directory_symlink(outside / "elsewhere", ws / "kernels");
    fs::create_symlink(outside / "secret", ws / "binding_extra.h");
    fs::remove_all(ws / ".kwb");
    fs::create_directory_symlink(outside / "elsewhere", ws / ".kwb");
    options.overwrite = true;
    const WorkspaceInitResult again = initWorkspace(task, ws.string(), options);
    ASSERT_TRUE(again.ok) << again.error;

    EXPECT_EQ(readText(outside / "bashrc"), "the user's own file");
    EXPECT_TRUE(fs::is_empty(outside / "elsewhere"));
    EXPECT_EQ(fs::symlink_status(ws / "model.py").type(), fs::file_type::regular);
    EXPECT_FALSE(fs::is_symlink(ws / "kernels"));
    EXPECT_TRUE(fs::is_regular_file(ws / "kernels" / "scale_residual.cu"));
    EXPECT_TRUE(fs::is_regular_file(ws / ".kwb" / "workspace.json"));
    // The planted link is gone, not hashed: a restore would bring the host file in.
    EXPECT_FALSE(fs::exists(fs::symlink_status(ws / "binding_extra.h")));
    EXPECT_EQ(
        std::count(again.protectedFiles.begin(), again.protectedFiles.end(), "binding_extra.h"), 0);
    EXPECT_TRUE(checkAndRestoreProtectedFiles(ws.string()).clean());
    // Executable helpers stay executable.
    EXPECT_NE(fs::status(ws / "utils" / "compile.sh").permissions() & fs::perms::owner_exec,
              fs::perms::none);
    fs::remove_all(base);
}
