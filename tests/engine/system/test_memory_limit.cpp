// Memory budgets follow the cgroup limit of a container or CI job, not only physical memory.
#include "engine/system/memory_limit.h"
#include "tests/test_files.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <random>

using namespace kwb;
namespace fs = std::filesystem;

namespace {

class CgroupTree : public ::testing::Test {
protected:
    void SetUp() override {
        root_ =
            fs::temp_directory_path() / ("kwb-cgroup-" + std::to_string(std::random_device{}()));
        fs::create_directories(root_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    void limit(const fs::path& group, const char* file, const std::string& value) {
        fs::create_directories(root_ / group);
        kwb::test::writeText(root_ / group / file, value + "\n");
    }
    fs::path root_;
};

} // namespace

TEST_F(CgroupTree, V2TakesTheLowestLimitOnThePathToTheRoot) {
    limit("user.slice/job", "memory.max", "max");
    limit("user.slice", "memory.max", "1073741824");
    limit("", "memory.max", "4294967296");
    EXPECT_EQ(cgroupMemoryLimit("0::/user.slice/job\n", root_.string()), 1073741824u);
    // A group no limit applies to.
    limit("free", "memory.max", "max");
    fs::remove(root_ / "user.slice" / "memory.max");
    fs::remove(root_ / "memory.max");
    EXPECT_EQ(cgroupMemoryLimit("0::/free\n", root_.string()), std::nullopt);
}

TEST_F(CgroupTree, V1AndHybridLayoutsAreRead) {
    // v1's "unlimited" is a huge number; only real limits count.
    limit("memory/docker/abc", "memory.limit_in_bytes", "9223372036854771712");
    limit("memory/docker", "memory.limit_in_bytes", "536870912");
    const std::string v1 = "12:pids:/docker/abc\n4:memory:/docker/abc\n1:cpu,cpuacct:/docker/abc\n";
    EXPECT_EQ(cgroupMemoryLimit(v1, root_.string()), 536870912u);
    // Hybrid: v2 mounted at unified/ beside the v1 hierarchies; the lower limit wins.
    limit("unified/docker/abc", "memory.max", "268435456");
    EXPECT_EQ(cgroupMemoryLimit(v1 + "0::/docker/abc\n", root_.string()), 268435456u);
}

TEST_F(CgroupTree, GarbageIsNoLimit) {
    limit("g", "memory.max", "lots");
    EXPECT_EQ(cgroupMemoryLimit("0::/g\nnot a cgroup line\n::\n", root_.string()), std::nullopt);
    EXPECT_EQ(cgroupMemoryLimit("", root_.string()), std::nullopt);
}

TEST(UsableMemory, IsPositiveAndAtMostPhysicalMemory) {
    const std::uint64_t usable = usableMemoryBytes();
    const std::uint64_t physical =
        static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
    EXPECT_GT(usable, 0u);
    EXPECT_LE(usable, physical);
}
