#include "engine/system/exclusive_file_lock.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace kwb;
namespace fs = std::filesystem;

namespace {
fs::path freshLockPath() {
    const fs::path dir =
        fs::temp_directory_path() / ("kwb-lock-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fs::remove(dir / "run.lock");
    return dir / "run.lock";
}
} // namespace

TEST(ExclusiveFileLock, ASecondHolderIsRefusedWithTheFirstOnesPidUntilItLetsGo) {
    const fs::path path = freshLockPath();
    std::string error;
    auto first = ExclusiveFileLock::tryAcquire(path.string(), &error);
    ASSERT_TRUE(first.has_value()) << error;

    bool heldByOther = false;
    EXPECT_FALSE(ExclusiveFileLock::tryAcquire(path.string(), &error, &heldByOther).has_value());
    EXPECT_TRUE(heldByOther);
    EXPECT_NE(error.find("pid " + std::to_string(::getpid())), std::string::npos) << error;

    first.reset();
    auto second = ExclusiveFileLock::tryAcquire(path.string(), &error, &heldByOther);
    EXPECT_TRUE(second.has_value()) << error;
    EXPECT_FALSE(heldByOther);
}

TEST(ExclusiveFileLock, AMovedLockStaysHeldAndAnUnopenableFileIsNamed) {
    const fs::path path = freshLockPath();
    std::string error;
    auto first = ExclusiveFileLock::tryAcquire(path.string(), &error);
    ASSERT_TRUE(first.has_value());
    ExclusiveFileLock moved = std::move(*first);
    first.reset(); // the moved-from object holds nothing
    EXPECT_FALSE(ExclusiveFileLock::tryAcquire(path.string(), &error).has_value());

    bool heldByOther = true;
    EXPECT_FALSE(ExclusiveFileLock::tryAcquire("/nonexistent-dir/run.lock", &error, &heldByOther)
                     .has_value());
    EXPECT_FALSE(heldByOther);
    EXPECT_NE(error.find("cannot open /nonexistent-dir/run.lock"), std::string::npos) << error;
}
