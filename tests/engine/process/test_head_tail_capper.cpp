// The one head/tail capper: streamed, whole-text and file inputs give the same capped text.
#include "engine/process/head_tail_capper.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace kwb;
namespace fs = std::filesystem;

namespace {
std::string flood() {
    std::string text = "FIRST\n";
    for (int i = 0; i < 10000; ++i)
        text += "line " + std::to_string(i) + "\n";
    return text + "LAST\n";
}
} // namespace

TEST(HeadTailCapper, ShortTextPassesUnchanged) {
    HeadTailCapper capper(100);
    capper.append("hello");
    const auto capped = capper.take();
    EXPECT_EQ(capped.text, "hello");
    EXPECT_EQ(capped.totalBytes, 5u);
    EXPECT_FALSE(capped.truncated());
    EXPECT_EQ(capHeadTail("hello", 100).text, "hello");
}

TEST(HeadTailCapper, KeepsHeadAndTailAndCountsTheRest) {
    const std::string text = flood();
    HeadTailCapper capper(1000);
    for (std::size_t i = 0; i < text.size(); i += 7) // a flood of tiny writes
        capper.append(std::string_view(text).substr(i, 7));
    const auto streamed = capper.take();
    EXPECT_EQ(streamed.totalBytes, text.size());
    EXPECT_EQ(streamed.omittedBytes, text.size() - 1000);
    EXPECT_EQ(streamed.text, text.substr(0, 500) + omittedNote(text.size() - 1000) +
                                 text.substr(text.size() - 500));
    // Whole text and file give the same answer for the same bytes.
    EXPECT_EQ(capHeadTail(text, 1000).text, streamed.text);
    const fs::path file = fs::temp_directory_path() / ("kwb-capper-" + std::to_string(getpid()));
    std::ofstream(file, std::ios::binary) << text;
    EXPECT_EQ(capFileHeadTail(file.string(), 1000).text, streamed.text);
    fs::remove(file);
    // take() leaves an empty capper behind.
    EXPECT_TRUE(capper.empty());
    capper.append("next");
    EXPECT_EQ(capper.take().text, "next");
}

TEST(HeadTailCapper, WholeTextCutsFallOnCharacterBoundaries) {
    std::string text;
    for (int i = 0; i < 400; ++i)
        text += "\xC3\xA9"; // é, two bytes each
    const auto capped = capHeadTail(text, 101);
    ASSERT_TRUE(capped.truncated());
    const std::string note = omittedNote(capped.omittedBytes);
    const auto at = capped.text.find(note);
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(at % 2, 0u); // the head ends after a whole character
    EXPECT_EQ((capped.text.size() - at - note.size()) % 2, 0u);
    EXPECT_EQ(capped.text.compare(capped.text.size() - 2, 2, "\xC3\xA9"), 0);
}

TEST(HeadTailCapper, AMissingFileIsEmpty) {
    EXPECT_EQ(capFileHeadTail("/nonexistent/kwb.log", 100).text, "");
}

// A stage log lies in a folder the sandbox writes: a link there is not read, nor a FIFO waited on.
TEST(HeadTailCapper, ALinkOrAFifoIsNotRead) {
    const fs::path base = fs::temp_directory_path() / ("kwb-capper-" + std::to_string(::getpid()));
    std::filesystem::create_directories(base);
    std::ofstream(base / "secret") << "host secret";
    std::filesystem::create_symlink(base / "secret", base / "log.txt");
    EXPECT_EQ(capFileHeadTail((base / "log.txt").string(), 100).text, "");
    ASSERT_EQ(::mkfifo((base / "fifo").c_str(), 0600), 0);
    EXPECT_EQ(capFileHeadTail((base / "fifo").string(), 100).text, "");
    EXPECT_EQ(capFileHeadTail((base / "secret").string(), 100).text, "host secret");
    std::filesystem::remove_all(base);
}
