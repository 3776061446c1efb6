// The engine's bytecode cache for an interpreter (engine/evaluation/bytecode_cache.h): filled
// once by a sandboxed process, then only looked up; never offered where stages are not isolated;
// filled again when the installation's package folders change.
#include "engine/evaluation/bytecode_cache.h"
#include "engine/process/sandbox.h"
#include "engine/system/content_hash.h"
#include "engine/system/python_environment.h"
#include "engine/system/resource_paths.h"
#include "tests/test_files.h"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
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
        for (const char* name : {"KWB_SANDBOX", "KWB_BYTECODE_CACHE_POLICY"})
            if (const char* old = std::getenv(name))
                saved_[name] = old;
    }
    void TearDown() override {
        for (const char* name : {"KWB_SANDBOX", "KWB_BYTECODE_CACHE_POLICY"}) {
            if (saved_.count(name))
                ::setenv(name, saved_[name].c_str(), 1);
            else
                ::unsetenv(name);
        }
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

    // An interpreter in a prefix of its own (<prefix>/bin/python3, which fails when run) with a
    // site-packages folder.
    std::string fakeInterpreter(const fs::path& prefix) const {
        fs::create_directories(prefix / "lib" / "python3.11" / "site-packages");
        fs::create_directories(prefix / "bin");
        test::writeText(prefix / "bin" / "python3", "#!/bin/sh\nexit 1\n");
        fs::permissions(prefix / "bin" / "python3", fs::perms::owner_all);
        return (prefix / "bin" / "python3").string();
    }

    fs::path root_;
    std::map<std::string, std::string> saved_;
};

TEST_F(BytecodeCacheTest, IsFilledFromNothingWithTorchAndTheHarnessThenOnlyLookedUp) {
    if (!sandboxIsolates())
        GTEST_SKIP()
            << "SKIPPED: no usable bubblewrap, and the cache is offered to isolated stages only";
    ::setenv("KWB_BYTECODE_CACHE_POLICY", "always", 1);
    const PythonProbe python = locatePython("");
    ASSERT_FALSE(python.path.empty()) << python.error;
    const std::string cacheDirectory = (root_ / "cache").string();
    // A stale cache for this interpreter holding a file the fill would not write: the fill starts
    // from nothing, so nothing of it stays.
    const fs::path stale =
        root_ / "cache" / "bytecode" / sha256Hex(resolveFolderOf(python.path)).substr(0, 16);
    fs::create_directories(stale);
    test::writeText(stale / "planted.cpython-311.pyc", "not bytecode");
    test::writeText(stale / "kwb-fill.txt", "an older installation");

    const BytecodeCache first = bytecodeCacheFor(cacheDirectory, python.path);
    ASSERT_FALSE(first.folder.empty()) << first.problem;
    EXPECT_EQ(fs::path(first.folder), stale);
    EXPECT_TRUE(first.problem.empty()) << first.problem;
    EXPECT_GT(first.fillSeconds, 0.0);
    EXPECT_FALSE(fs::exists(stale / "planted.cpython-311.pyc"));
    EXPECT_EQ(test::readText(stale / "kwb-fill.txt"),
              bytecodeFingerprint(resolveFolderOf(python.path)));
    // What a stage imports first: torch's package and the harness's stage modules.
    EXPECT_EQ(bytecodeFiles(first.folder, "packages/torch/__init__.cpython-3"), 1);
    EXPECT_GE(bytecodeFiles(first.folder), 500);
    // The harness too, unless it lies where a stage may write (a checkout below /tmp, the
    // fill's TMPDIR: bytecode_policy.writable_roots), whose bytecode is never trusted.
    const auto inside = [](const fs::path& path, const fs::path& root) {
        const std::string p = fs::weakly_canonical(path).string() + "/";
        const std::string r = fs::weakly_canonical(root).string() + "/";
        return !root.empty() && p.rfind(r, 0) == 0;
    };
    const bool harnessWritable = inside(harnessDirectory(), "/tmp");
    EXPECT_EQ(bytecodeFiles(first.folder, "/kwb_harness/stages/verify.cpython-3"),
              harnessWritable ? 0 : 1);
    // The fill's own HOME and folders do not stay behind.
    int entries = 0;
    for (const auto& entry : fs::directory_iterator(root_ / "cache" / "bytecode"))
        entries += entry.path().extension() != ".lock";
    EXPECT_EQ(entries, 1);

    const BytecodeCache again = bytecodeCacheFor(cacheDirectory, python.path);
    EXPECT_EQ(again.folder, first.folder);
    EXPECT_EQ(again.fillSeconds, 0.0);

    // After a run without isolation nothing of it is trusted.
    forgetBytecodeCache(cacheDirectory);
    EXPECT_FALSE(fs::exists(root_ / "cache" / "bytecode"));
}

TEST_F(BytecodeCacheTest, IsNotFilledWhereTheInstallationShipsItsOwnBytecode) {
    if (!sandboxIsolates())
        GTEST_SKIP()
            << "SKIPPED: no usable bubblewrap, and the cache is offered to isolated stages only";
    ::unsetenv("KWB_BYTECODE_CACHE_POLICY");
    const std::string python = fakeInterpreter(root_ / "prefix");
    const fs::path torchCache =
        root_ / "prefix" / "lib" / "python3.11" / "site-packages" / "torch" / "__pycache__";
    fs::create_directories(torchCache);
    test::writeText(torchCache / "__init__.cpython-311.pyc", "bytecode");
    const BytecodeCache shipped = bytecodeCacheFor((root_ / "cache").string(), python);
    EXPECT_TRUE(shipped.folder.empty());
    EXPECT_TRUE(shipped.problem.empty()) << shipped.problem;
    EXPECT_FALSE(fs::exists(root_ / "cache" / "bytecode"));

    // Without it a fill is tried, and this interpreter's failure is said, not hidden.
    const std::string bare = fakeInterpreter(root_ / "bare");
    const BytecodeCache tried = bytecodeCacheFor((root_ / "cache").string(), bare);
    EXPECT_TRUE(tried.folder.empty());
    EXPECT_NE(tried.problem.find("failed"), std::string::npos) << tried.problem;
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
    const std::string python = fakeInterpreter(root_ / "prefix");
    const fs::path packages = root_ / "prefix" / "lib" / "python3.11" / "site-packages";

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
