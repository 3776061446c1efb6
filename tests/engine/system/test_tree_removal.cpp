#include "engine/system/tree_removal.h"
#include "tests/test_files.h"
#include "tests/unprivileged_child.h"

#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kwb;
namespace fs = std::filesystem;

namespace {

class TreeRemovalTest : public ::testing::Test {
protected:
    test::ScopedTestFolder folder_{std::string("tree-removal-") +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name()};
    const fs::path root_ = folder_.path();

    static void write(const fs::path& path, std::size_t bytes) {
        test::writeText(path, std::string(bytes, 'x'));
    }
};

} // namespace

TEST_F(TreeRemovalTest, RemovesANestedTreeAndCountsWhatItHeld) {
    write(root_ / "tree/a.bin", 64 * 1024);
    write(root_ / "tree/sub/b.bin", 64 * 1024);
    fs::create_directories(root_ / "tree/empty");

    const TreeSweep sweep = removeTree(root_ / "tree");
    EXPECT_TRUE(sweep.complete);
    EXPECT_FALSE(fs::exists(root_ / "tree"));
    EXPECT_GE(sweep.bytes, 128u * 1024);
    EXPECT_EQ(sweep.entries, 5u); // two files, three folders
    EXPECT_TRUE(fs::exists(root_));
}

TEST_F(TreeRemovalTest, LinksAreRemovedAndWhatTheyPointAtStays) {
    write(root_ / "outside/keep.txt", 10);
    fs::create_directories(root_ / "tree");
    fs::create_directory_symlink(root_ / "outside", root_ / "tree/to-folder");
    fs::create_symlink(root_ / "outside/keep.txt", root_ / "tree/to-file");
    fs::create_directory_symlink(root_ / "outside", root_ / "link-itself");

    EXPECT_TRUE(removeTree(root_ / "tree").complete);
    EXPECT_TRUE(removeTree(root_ / "link-itself").complete);
    EXPECT_FALSE(fs::exists(root_ / "tree"));
    EXPECT_FALSE(fs::is_symlink(root_ / "link-itself"));
    EXPECT_TRUE(fs::is_regular_file(root_ / "outside/keep.txt"));
}

TEST_F(TreeRemovalTest, ATreeDeeperThanTheDescriptorsItMayHoldIsRemovedWhole) {
    fs::path deep = root_ / "tree";
    for (int level = 0; level < 300; ++level)
        deep /= "d";
    // Made level by level from a descriptor: the whole path is longer than some calls take.
    int fd = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(fd, 0);
    for (const char* name : {"tree"}) {
        ASSERT_EQ(::mkdirat(fd, name, 0755), 0);
        const int next = ::openat(fd, name, O_RDONLY | O_DIRECTORY);
        ::close(fd);
        fd = next;
    }
    for (int level = 0; level < 300; ++level) {
        ASSERT_EQ(::mkdirat(fd, "d", 0755), 0);
        const int next = ::openat(fd, "d", O_RDONLY | O_DIRECTORY);
        ::close(fd);
        fd = next;
        ASSERT_GE(fd, 0);
    }
    const int file = ::openat(fd, "bottom.txt", O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(file, 0);
    ::close(file);
    ::close(fd);

    const int rootFd = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY);
    const TreeSweep measured = measureTreeAt(rootFd, "tree");
    EXPECT_FALSE(measured.complete) << "a measurement cannot reach the bottom in place";
    const TreeSweep removed = removeTreeAt(rootFd, "tree");
    ::close(rootFd);
    EXPECT_TRUE(removed.complete);
    EXPECT_EQ(removed.entries, 302u); // 301 folders and the file
    EXPECT_TRUE(fs::is_empty(root_)) << "nothing moved up was left behind";
}

TEST_F(TreeRemovalTest, FoldersItsOwnerClosedAreOpenedAgainAndRemoved) {
    write(root_ / "tree/locked/inner/inside.txt", 10);
    const fs::path root = root_;
    const int status = test::runAsUnprivileged(root_, [root]() {
        if (::chmod((root / "tree/locked/inner").c_str(), 0) != 0 ||
            ::chmod((root / "tree/locked").c_str(), 0) != 0)
            return 10;
        const TreeSweep sweep = removeTree(root / "tree");
        if (!sweep.complete)
            return 11;
        return ::access((root / "tree").c_str(), F_OK) == 0 ? 12 : 0;
    });
    EXPECT_EQ(status, 0) << "10: chmod failed, 11: incomplete, 12: the tree stayed";
}

TEST_F(TreeRemovalTest, AMissingNameIsNothingToDoAndAFileIsRemoved) {
    EXPECT_TRUE(removeTree(root_ / "absent").complete);
    EXPECT_EQ(removeTree(root_ / "absent").entries, 0u);
    fs::create_directories(root_ / "trailing/sub");
    EXPECT_TRUE(removeTree(root_.string() + "/trailing/").complete) << "a trailing slash";
    EXPECT_FALSE(fs::exists(root_ / "trailing"));
    write(root_ / "file.txt", 10);
    const TreeSweep sweep = removeTree(root_ / "file.txt");
    EXPECT_EQ(sweep.entries, 1u);
    EXPECT_FALSE(fs::exists(root_ / "file.txt"));
}

TEST_F(TreeRemovalTest, ARenameNeverReplacesWhatIsThere) {
    write(root_ / "a/file", 10);
    write(root_ / "taken/file", 10);
    const int fd = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(fd, 0);
    EXPECT_FALSE(renameWithoutReplacing(fd, "a", fd, "taken"));
    EXPECT_EQ(errno, EEXIST);
    EXPECT_TRUE(fs::is_regular_file(root_ / "a/file"));
    EXPECT_TRUE(renameWithoutReplacing(fd, "a", fd, "free"));
    ::close(fd);
    EXPECT_TRUE(fs::is_regular_file(root_ / "free/file"));
    EXPECT_FALSE(fs::exists(root_ / "a"));
}
