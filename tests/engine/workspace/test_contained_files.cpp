// Reads and writes inside a workspace that never follow a link out of it.
#include "engine/workspace/contained_files.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace kwb;
namespace fs = std::filesystem;

namespace {

class ContainedFiles : public ::testing::Test {
protected:
    void SetUp() override {
        base_ = fs::temp_directory_path() /
                ("kwb-contained-" + std::to_string(getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(base_);
        root_ = base_ / "workspace";
        outside_ = base_ / "outside";
        fs::create_directories(root_);
        fs::create_directories(outside_);
        std::ofstream(outside_ / "secret.txt") << "host secret";
    }
    void TearDown() override { fs::remove_all(base_); }

    static std::string slurp(const fs::path& path) {
        std::ifstream in(path);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }

    fs::path base_, root_, outside_;
};

} // namespace

TEST_F(ContainedFiles, PathsMustStayInside) {
    EXPECT_EQ(containedPathProblem("kernels/a.cu"), "");
    EXPECT_NE(containedPathProblem(""), "");
    EXPECT_NE(containedPathProblem("/etc/passwd"), "");
    EXPECT_NE(containedPathProblem("../x"), "");
    EXPECT_NE(containedPathProblem("kernels/../../x"), "");
    EXPECT_NE(containedPathProblem("./a"), "");
    EXPECT_NE(containedPathProblem("a//b"), "");
    EXPECT_NE(containedPathProblem("a\\..\\b"), "");
    EXPECT_NE(containedPathProblem(std::string("a\0b", 3)), "");
}

TEST_F(ContainedFiles, WritesCreateFoldersAndReadBack) {
    ASSERT_TRUE(writeFileInside(root_, "kernels/deep/a.cu", "__global__ void k() {}"));
    EXPECT_EQ(readFileInside(root_, "kernels/deep/a.cu").value_or("?"), "__global__ void k() {}");
    EXPECT_TRUE(isRegularFileInside(root_, "kernels/deep/a.cu"));
    EXPECT_TRUE(removeFileInside(root_, "kernels/deep/a.cu"));
    EXPECT_FALSE(fs::exists(root_ / "kernels/deep/a.cu"));
    EXPECT_TRUE(removeFileInside(root_, "kernels/deep/a.cu")); // already gone is fine
    std::string error;
    EXPECT_FALSE(writeFileInside(root_, "../escape.txt", "x", &error));
    EXPECT_NE(error.find("'..'"), std::string::npos) << error;
    EXPECT_FALSE(fs::exists(base_ / "escape.txt"));
}

TEST_F(ContainedFiles, ALinkedFolderIsReplacedNotFollowed) {
    fs::create_directory_symlink(outside_, root_ / "utils");
    ASSERT_TRUE(writeFileInside(root_, "utils/common.py", "restored"));
    EXPECT_FALSE(fs::is_symlink(root_ / "utils"));
    EXPECT_EQ(slurp(root_ / "utils/common.py"), "restored");
    EXPECT_FALSE(fs::exists(outside_ / "common.py")); // nothing was written through the link
    EXPECT_EQ(slurp(outside_ / "secret.txt"), "host secret");
}

TEST_F(ContainedFiles, LinksAreNeverRead) {
    fs::create_symlink(outside_ / "secret.txt", root_ / "notes.txt");
    fs::create_directory_symlink(outside_, root_ / "data");
    EXPECT_FALSE(readFileInside(root_, "notes.txt"));
    EXPECT_FALSE(readFileInside(root_, "data/secret.txt"));
    EXPECT_FALSE(isRegularFileInside(root_, "notes.txt"));
    // Writing where a link stands replaces the link, never the target.
    ASSERT_TRUE(writeFileInside(root_, "notes.txt", "mine"));
    EXPECT_FALSE(fs::is_symlink(root_ / "notes.txt"));
    EXPECT_EQ(slurp(outside_ / "secret.txt"), "host secret");
    // Removing through a linked folder does nothing outside.
    EXPECT_FALSE(removeFileInside(root_, "data/secret.txt"));
    EXPECT_TRUE(fs::exists(outside_ / "secret.txt"));
}

TEST_F(ContainedFiles, SizeLimitAndNonFiles) {
    ASSERT_TRUE(writeFileInside(root_, "big.bin", std::string(1000, 'x')));
    EXPECT_FALSE(readFileInside(root_, "big.bin", 999));
    EXPECT_TRUE(readFileInside(root_, "big.bin", 1000));
    fs::create_directories(root_ / "folder");
    EXPECT_FALSE(readFileInside(root_, "folder"));
    EXPECT_FALSE(readFileInside(root_, "missing.txt"));
}

TEST_F(ContainedFiles, AWriteReplacesAHardLinkInsteadOfWritingThroughIt) {
    std::error_code ec;
    fs::create_hard_link(outside_ / "secret.txt", root_ / "notes.txt", ec);
    if (ec)
        GTEST_SKIP() << "no hard links here: " << ec.message();
    ASSERT_TRUE(writeFileInside(root_, "notes.txt", "mine"));
    EXPECT_EQ(slurp(root_ / "notes.txt"), "mine");
    EXPECT_EQ(slurp(outside_ / "secret.txt"), "host secret");
}

TEST_F(ContainedFiles, AWriteKeepsTheModeOfTheFileItReplaces) {
    ASSERT_TRUE(writeFileInside(root_, "tool.sh", "#!/bin/sh\n", nullptr, 0755));
    EXPECT_EQ(fs::status(root_ / "tool.sh").permissions() & fs::perms::all,
              static_cast<fs::perms>(0755));
    ASSERT_TRUE(writeFileInside(root_, "tool.sh", "#!/bin/sh\ntrue\n"));
    EXPECT_EQ(fs::status(root_ / "tool.sh").permissions() & fs::perms::all,
              static_cast<fs::perms>(0755));
}

TEST_F(ContainedFiles, FoldersAreMadeAndListedWithoutFollowingLinks) {
    fs::create_directory_symlink(outside_, root_ / "build");
    ASSERT_TRUE(makeFolderInside(root_, "build/kwb_kernels"));
    EXPECT_FALSE(fs::is_symlink(root_ / "build"));
    EXPECT_FALSE(fs::exists(outside_ / "kwb_kernels"));
    ASSERT_TRUE(writeFileInside(root_, "build/kwb_kernels/a.json", "{}"));
    fs::create_symlink(outside_ / "secret.txt", root_ / "build" / "kwb_kernels" / "b.json");
    fs::create_directories(root_ / "build" / "kwb_kernels" / "c.json");
    EXPECT_EQ(regularFilesInside(root_, "build/kwb_kernels"), std::vector<std::string>{"a.json"});
    fs::remove_all(root_ / "build");
    fs::create_directory_symlink(outside_, root_ / "build");
    EXPECT_TRUE(regularFilesInside(root_, "build").empty()); // a linked folder lists nothing
}
