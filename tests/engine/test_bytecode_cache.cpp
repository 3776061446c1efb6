// The engine's bytecode cache for an interpreter (engine/evaluation/bytecode_cache.h): filled
// once by a sandboxed process, then only looked up; never offered where stages are not isolated;
// filled again when the installation's package folders change.
#include "engine/evaluation/bytecode_cache.h"
#include "engine/process/sandbox.h"
#include "engine/system/python_environment.h"
#include "tests/test_files.h"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <optional>
#include <random>

namespace kwb {
namespace {

namespace fs = std::filesystem;

class BytecodeCacheTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ =
            fs::temp_directory_path() / ("kwb-bytecode-" + std::to_string(std::random_device{}()));
        fs::create_directories(root_);
        if (const char* old = std::getenv("KWB_SANDBOX"))
            savedSandbox_ = old;
    }
    void TearDown() override {
        if (savedSandbox_)
            ::setenv("KWB_SANDBOX", savedSandbox_->c_str(), 1);
        else
            ::unsetenv("KWB_SANDBOX");
        std::error_code ec;
        fs::remove_all(root_, ec);
    }

    // Bytecode files below `folder` whose path holds `part` (any Python 3 version's tag).
    static int bytecodeFiles(const fs::path& folder, const std::string& part = "") {
        int count = 0;
        std::error_code ec;
        for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end;
             it.increment(ec))
            count += it->path().extension() == ".pyc" &&
                     it->path().string().find(part) != std::string::npos;
        return count;
    }

    fs::path root_;
    std::optional<std::string> savedSandbox_;
};

TEST_F(BytecodeCacheTest, IsFilledOnceWithTorchAndTheHarnessThenOnlyLookedUp) {
    if (!sandboxIsolates())
        GTEST_SKIP()
            << "SKIPPED: no usable bubblewrap, and the cache is offered to isolated stages only";
    const PythonProbe python = locatePython("");
    ASSERT_FALSE(python.path.empty()) << python.error;
    const std::string cacheDirectory = (root_ / "cache").string();

    const BytecodeCache first = bytecodeCacheFor(cacheDirectory, python.path);
    ASSERT_FALSE(first.folder.empty()) << first.problem;
    EXPECT_TRUE(first.problem.empty()) << first.problem;
    EXPECT_GT(first.fillSeconds, 0.0);
    EXPECT_TRUE(fs::is_regular_file(fs::path(first.folder) / "kwb-fill.txt"));
    // What a stage imports first: torch's package and the harness's stage modules.
    EXPECT_EQ(bytecodeFiles(first.folder, "/site-packages/torch/__init__.cpython-3"), 1);
    EXPECT_GE(bytecodeFiles(first.folder), 500);
    EXPECT_EQ(bytecodeFiles(first.folder, "/harness/kwb_harness/stages/verify.cpython-3"), 1);
    // The fill's own HOME does not stay behind.
    EXPECT_FALSE(fs::exists(first.folder + "-home"));

    const BytecodeCache again = bytecodeCacheFor(cacheDirectory, python.path);
    EXPECT_EQ(again.folder, first.folder);
    EXPECT_EQ(again.fillSeconds, 0.0);
}

TEST_F(BytecodeCacheTest, IsNotOfferedWhereStagesRunWithLimitsOnly) {
    // Without namespaces a candidate could write the cache like any other file of the user.
    ::setenv("KWB_SANDBOX", "rlimits-only", 1);
    const PythonProbe python = locatePython("");
    ASSERT_FALSE(python.path.empty()) << python.error;
    const BytecodeCache cache = bytecodeCacheFor((root_ / "cache").string(), python.path);
    EXPECT_TRUE(cache.folder.empty());
    EXPECT_FALSE(fs::exists(root_ / "cache" / "bytecode"));
}

TEST_F(BytecodeCacheTest, ItsFingerprintFollowsTheInstallationsPackageFolders) {
    // An interpreter in a prefix of its own: <prefix>/bin/python3 and its site-packages.
    const fs::path prefix = root_ / "prefix";
    const fs::path packages = prefix / "lib" / "python3.11" / "site-packages";
    fs::create_directories(packages);
    fs::create_directories(prefix / "bin");
    test::writeText(prefix / "bin" / "python3", "#!/bin/sh\nexit 1\n");
    fs::permissions(prefix / "bin" / "python3", fs::perms::owner_all);
    const std::string python = (prefix / "bin" / "python3").string();

    const std::string before = bytecodeFingerprint(python);
    EXPECT_EQ(before, bytecodeFingerprint(python));
    EXPECT_NE(before.find(packages.string().substr(0, packages.string().size() - 14)),
              std::string::npos)
        << before;
    // pip installing a package adds a folder to site-packages, which changes its time.
    fs::last_write_time(packages, fs::last_write_time(packages) - std::chrono::hours(1));
    const std::string older = bytecodeFingerprint(python);
    EXPECT_NE(older, before);
    fs::create_directories(packages / "newpackage");
    EXPECT_NE(bytecodeFingerprint(python), older);
}

} // namespace
} // namespace kwb
