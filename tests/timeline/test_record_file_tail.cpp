#include "engine/timeline/record_file_tail.h"
#include "engine/timeline/timeline_builder.h"
#include "timeline_test_data.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <gtest/gtest.h>
#include <mutex>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace kwb::timeline;
using namespace kwb::test;
namespace fs = std::filesystem;

namespace {

class RecordFileTailTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("kwb_tail_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        all_ = lines(readText(timelineData("two_streams.jsonl")));
    }
    void TearDown() override { fs::remove_all(dir_); }

    void append(const fs::path& file, const std::string& text) {
        std::ofstream(file, std::ios::app | std::ios::binary) << text << std::flush;
    }

    fs::path dir_;
    std::vector<std::string> all_;
};

} // namespace

TEST_F(RecordFileTailTest, DeliversAppendedLinesInStepsAndHoldsBackAPartialLine) {
    const fs::path file = dir_ / "records.jsonl";
    RecordFileTail tail(file.string());
    std::vector<std::string> seen;
    auto collect = [&](std::string_view line) { seen.emplace_back(line); };
    EXPECT_EQ(tail.poll(collect), 0u); // not created yet

    append(file, all_[0] + "\n" + all_[1] + "\n" + all_[2].substr(0, 10));
    EXPECT_EQ(tail.poll(collect), 2u);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[1], all_[1]);

    append(file, all_[2].substr(10) + "\n");
    EXPECT_EQ(tail.poll(collect), 1u);
    EXPECT_EQ(seen.back(), all_[2]);
    EXPECT_EQ(tail.poll(collect), 0u);

    std::string rest;
    for (std::size_t i = 3; i < all_.size(); ++i)
        rest += all_[i] + "\n";
    append(file, rest + "{\"t\":\"kernel\""); // the writer died mid-line
    EXPECT_EQ(tail.poll(collect), all_.size() - 3);
    EXPECT_EQ(tail.drainPartial(collect), 1u);
    EXPECT_EQ(seen.back(), "{\"t\":\"kernel\"");

    TimelineBuilder builder;
    for (const auto& line : seen)
        builder.addLine(line);
    EXPECT_EQ(builder.finish()->kernelCount, 4u);
    EXPECT_EQ(builder.finish()->dropped.malformed, 6u); // the file's five and the cut line
}

TEST_F(RecordFileTailTest, StartsOverWhenTheFileIsReplacedByAShorterOne) {
    const fs::path file = dir_ / "records.jsonl";
    append(file, all_[0] + "\n" + all_[1] + "\n");
    RecordFileTail tail(file.string());
    std::vector<std::string> seen;
    auto collect = [&](std::string_view line) { seen.emplace_back(line); };
    EXPECT_EQ(tail.poll(collect), 2u);
    fs::resize_file(file, 0);
    append(file, all_[3] + "\n");
    EXPECT_EQ(tail.poll(collect), 1u);
    EXPECT_EQ(seen.back(), all_[3]);
    EXPECT_EQ(tail.restarts(), 1u);
}

TEST_F(RecordFileTailTest, FollowsAFileRenamedOverItsNameEvenWhenLonger) {
    // A writer that rewrites its file and renames it into place (a resumed tuning run): the new
    // file can already be longer than what was read of the old one.
    const fs::path file = dir_ / "samples.jsonl";
    append(file, all_[0] + "\n");
    RecordFileTail tail(file.string());
    std::vector<std::string> seen;
    auto collect = [&](std::string_view line) { seen.emplace_back(line); };
    EXPECT_EQ(tail.poll(collect), 1u);
    const fs::path fresh = dir_ / "samples.jsonl.part";
    append(fresh, all_[2] + "\n" + all_[3] + "\n" + all_[4] + "\n");
    fs::rename(fresh, file);
    seen.clear();
    EXPECT_EQ(tail.poll(collect), 3u);
    EXPECT_EQ(tail.restarts(), 1u);
    EXPECT_EQ(seen, (std::vector<std::string>{all_[2], all_[3], all_[4]}));
    // The name removed: what was opened stays readable, and nothing restarts.
    fs::remove(file);
    EXPECT_EQ(tail.poll(collect), 0u);
    EXPECT_EQ(tail.restarts(), 1u);
    // Asked to, it reads the file under the name again from its start.
    append(file, all_[5] + "\n");
    tail.startOver();
    seen.clear();
    EXPECT_EQ(tail.poll(collect), 1u);
    EXPECT_EQ(seen, (std::vector<std::string>{all_[5]}));
}

TEST_F(RecordFileTailTest, ReadsAFifoWithoutBlocking) {
    const fs::path fifo = dir_ / "records.fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    RecordFileTail tail(fifo.string());
    std::vector<std::string> seen;
    auto collect = [&](std::string_view line) { seen.emplace_back(line); };
    EXPECT_EQ(tail.poll(collect), 0u); // no writer yet: returns at once
    std::ofstream writer(fifo);
    writer << all_[0] << "\n" << all_[5] << "\n" << std::flush;
    std::size_t got = 0;
    for (int i = 0; i < 100 && got < 2; ++i) {
        got += tail.poll(collect);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[1], all_[5]);
}

TEST_F(RecordFileTailTest, FollowGrowsSnapshotsWhileAWriterAppendsAndStopsOnRequest) {
    const fs::path file = dir_ / "records.jsonl";
    std::mutex mutex;
    std::vector<std::uint64_t> kernelCounts;
    TimelineSnapshot last;
    std::atomic<bool> firstSeen{false};
    std::jthread follower([&](std::stop_token stop) {
        last = followRecordFile(
            file.string(), stop,
            [&](TimelineSnapshot s) {
                std::lock_guard lock(mutex);
                kernelCounts.push_back(s->kernelCount);
                firstSeen = true;
            },
            std::chrono::milliseconds(5));
    });
    std::string firstHalf;
    for (std::size_t i = 0; i < 7; ++i)
        firstHalf += all_[i] + "\n";
    append(file, firstHalf);
    for (int i = 0; i < 400 && !firstSeen; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(firstSeen) << "no snapshot within 2 s";
    std::string secondHalf;
    for (std::size_t i = 7; i < all_.size(); ++i)
        secondHalf += all_[i] + "\n";
    append(file, secondHalf);
    follower.request_stop();
    follower.join();
    ASSERT_TRUE(last);
    EXPECT_EQ(last->kernelCount, 4u); // everything written before the stop
    std::lock_guard lock(mutex);
    ASSERT_FALSE(kernelCounts.empty());
    EXPECT_EQ(kernelCounts.front(), 2u);
    EXPECT_EQ(kernelCounts.back(), 4u);
}
