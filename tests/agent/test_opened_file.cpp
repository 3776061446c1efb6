// Telling what a file handed to the workbench holds: tasks by name, workspaces by their files,
// traces and exported episodes by their first bytes, and anything else with a reason.
#include "agent/store/episode_export.h"
#include "agent/store/opened_file.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace kwb::agent;
namespace fs = std::filesystem;

namespace {

class OpenedFileTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("kwb-opened-file-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string write(const std::string& name, const std::string& bytes) {
        const fs::path path = dir_ / name;
        fs::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << bytes;
        return path.string();
    }

    fs::path dir_;
};

} // namespace

TEST_F(OpenedFileTest, tasksAndWorkspacesByTheirNamesAndFiles) {
    EXPECT_EQ(classifyOpenedFile(write("model.py", "import torch\n")).kind, OpenedFileKind::Task);
    write("ws/model.py", "import torch\n");
    write("ws/model_new.py", "import torch\n");
    EXPECT_EQ(classifyOpenedFile((dir_ / "ws").string()).kind, OpenedFileKind::Workspace);
    fs::create_directories(dir_ / "plain");
    const OpenedFile folder = classifyOpenedFile((dir_ / "plain").string());
    EXPECT_EQ(folder.kind, OpenedFileKind::Unknown);
    EXPECT_NE(folder.why.find("not a workspace"), std::string::npos) << folder.why;
}

TEST_F(OpenedFileTest, tracesOfBothFormatsByTheirFirstBytes) {
    EXPECT_EQ(
        classifyOpenedFile(write("a.jsonl", "{\"t\":\"header\",\"format\":\"kwb-cupti/1\"}\n"))
            .kind,
        OpenedFileKind::Trace);
    EXPECT_EQ(classifyOpenedFile(write("b.json", "{\"traceEvents\":[]}")).kind,
              OpenedFileKind::Trace);
    EXPECT_EQ(classifyOpenedFile(write("c.kwbtrace", "[{\"ph\":\"X\"}]")).kind,
              OpenedFileKind::Trace);
}

TEST_F(OpenedFileTest, exportedEpisodesAsWrittenNowAndBefore) {
    EpisodeTrajectory trajectory;
    trajectory.episode.id = 4;
    trajectory.episode.task = "01_gelu.py";
    std::ostringstream line;
    writeExportLine(toExportLine(trajectory), line);
    EXPECT_EQ(classifyOpenedFile(write("run.jsonl", line.str())).kind, OpenedFileKind::Episodes);
    // Before the format led the line, keys were sorted: the episode record came first.
    EXPECT_EQ(classifyOpenedFile(write("old.jsonl", toExportLine(trajectory).dump() + "\n")).kind,
              OpenedFileKind::Episodes);
}

TEST_F(OpenedFileTest, anythingElseSaysWhatItIsNot) {
    const OpenedFile text = classifyOpenedFile(write("notes.txt", "kernel timings\n"));
    EXPECT_EQ(text.kind, OpenedFileKind::Unknown);
    EXPECT_NE(text.why.find("notes.txt is not a task"), std::string::npos) << text.why;
    const OpenedFile gzip = classifyOpenedFile(write("t.json.gz", std::string("\x1f\x8b\x08", 3)));
    EXPECT_EQ(gzip.kind, OpenedFileKind::Unknown);
    EXPECT_NE(gzip.why.find("gzip"), std::string::npos) << gzip.why;
    const OpenedFile missing = classifyOpenedFile((dir_ / "nope.jsonl").string());
    EXPECT_EQ(missing.kind, OpenedFileKind::Unknown);
    EXPECT_NE(missing.why.find("does not exist"), std::string::npos) << missing.why;
}
