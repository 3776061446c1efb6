// Task sets for rollouts: a KernelBench checkout, a folder of task files, Ops-6K rows; bad input
// is named, and the content hash follows the tasks, not the folder.
#include "engine/process/process_runner.h"
#include "engine/tasks/parquet_task_rows.h"
#include "engine/tasks/task_set.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <random>

namespace kwb::test {
namespace {

namespace fs = std::filesystem;

TaskSetOptions only(std::vector<int> levels, std::size_t limit = 0, std::size_t maxTasks = 100000) {
    TaskSetOptions options;
    options.levels = std::move(levels);
    options.limit = limit;
    options.maxTasks = maxTasks;
    return options;
}

const char* kTask = "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
                    "    def forward(self, x):\n        return x * 2\n\n"
                    "def get_inputs():\n    return [torch.randn(4)]\n\n"
                    "def get_init_inputs():\n    return []\n";

class TaskSetTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ =
            fs::temp_directory_path() / ("kwb-taskset-" + std::to_string(std::random_device()()));
        fs::create_directories(root_);
    }
    void TearDown() override { fs::remove_all(root_); }

    void write(const fs::path& relative, const std::string& text) {
        fs::create_directories((root_ / relative).parent_path());
        std::ofstream(root_ / relative, std::ios::binary) << text;
    }

    fs::path root_;
};

TEST_F(TaskSetTest, AKernelBenchCheckoutGivesLevelsAndIdsFromItsFolders) {
    write("kb/KernelBench/level1/19_ReLU.py", kTask);
    write("kb/KernelBench/level1/1_Square_matmul.py", std::string(kTask) + "# other\n");
    write("kb/KernelBench/level2/5_Conv_Relu.py", std::string(kTask) + "# conv\n");
    write("kb/KernelBench/level2/notes.py", "print('not a task')\n");
    write("kb/README.md", "KernelBench\n");

    const TaskSetLoad all = loadTaskSet((root_ / "kb").string());
    ASSERT_TRUE(all.ok) << all.error;
    EXPECT_EQ(all.set.kind, TaskSetKind::KernelBench);
    ASSERT_EQ(all.set.tasks.size(), 3u);
    EXPECT_EQ(all.set.tasks[0].id, "level1/19_ReLU");
    EXPECT_EQ(all.set.tasks[1].id, "level1/1_Square_matmul");
    EXPECT_EQ(all.set.tasks[2].id, "level2/5_Conv_Relu");
    EXPECT_EQ(all.set.tasks[2].level, 2);
    ASSERT_EQ(all.set.problems.size(), 1u);
    EXPECT_NE(all.set.problems[0].find("notes.py"), std::string::npos);

    const TaskSetLoad level2 = loadTaskSet((root_ / "kb").string(), only({2}));
    ASSERT_TRUE(level2.ok);
    ASSERT_EQ(level2.set.tasks.size(), 1u);
    EXPECT_NE(level2.set.contentHash, all.set.contentHash);
    const TaskSetLoad first = loadTaskSet((root_ / "kb").string(), only({}, 1));
    ASSERT_EQ(first.set.tasks.size(), 1u);
    EXPECT_EQ(first.set.tasks[0].id, "level1/19_ReLU");
}

TEST_F(TaskSetTest, TheHashFollowsTheTasksNotTheFolder) {
    write("a/gelu.py", kTask);
    write("b/gelu.py", kTask);
    const TaskSetLoad a = loadTaskSet((root_ / "a").string());
    const TaskSetLoad b = loadTaskSet((root_ / "b").string());
    ASSERT_TRUE(a.ok && b.ok);
    EXPECT_EQ(a.set.kind, TaskSetKind::Folder);
    EXPECT_EQ(a.set.contentHash, b.set.contentHash);
    EXPECT_EQ(a.set.contentHash.size(), 64u);
    write("b/gelu.py", std::string(kTask) + "# edited\n");
    EXPECT_NE(loadTaskSet((root_ / "b").string()).set.contentHash, a.set.contentHash);
}

TEST_F(TaskSetTest, OpsRowsKeepTheirColumnsAndBadRowsAreNamed) {
    nlohmann::json good = {
        {"code", kTask}, {"ops", "[\"torch.relu\", \"torch.matmul\"]"}, {"data_source", "ops6k"}};
    nlohmann::json arrayOps = {{"code", kTask}, {"ops", {"torch.add"}}, {"level", 2}};
    write("ops.jsonl", good.dump() + "\n\n{not json\n" + nlohmann::json{{"code", "x = 1"}}.dump() +
                           "\n" + std::string(100, '[') + "\n" + arrayOps.dump() + "\n");
    const TaskSetLoad load = loadTaskSet((root_ / "ops.jsonl").string());
    ASSERT_TRUE(load.ok) << load.error;
    EXPECT_EQ(load.set.kind, TaskSetKind::JsonLines);
    ASSERT_EQ(load.set.tasks.size(), 2u);
    const TaskSetEntry& first = load.set.tasks[0];
    EXPECT_EQ(first.id, "row-1");
    EXPECT_EQ(first.ops, (std::vector<std::string>{"torch.relu", "torch.matmul"}));
    EXPECT_EQ(first.dataSource, "ops6k");
    EXPECT_EQ(first.source, kTask);
    EXPECT_EQ(load.set.tasks[1].id, "row-6");
    EXPECT_EQ(load.set.tasks[1].level, 2);
    ASSERT_EQ(load.set.problems.size(), 3u);
    EXPECT_NE(load.set.problems[0].find("ops.jsonl:3"), std::string::npos);
    EXPECT_NE(load.set.problems[1].find("ops.jsonl:4"), std::string::npos);
    EXPECT_NE(load.set.problems[2].find("ops.jsonl:5"), std::string::npos);

    const TaskSetLoad capped = loadTaskSet((root_ / "ops.jsonl").string(), only({}, 0, 2));
    EXPECT_FALSE(capped.ok);
    EXPECT_NE(capped.error.find("more than 2 rows"), std::string::npos);
}

TEST_F(TaskSetTest, WhatIsNoTaskSetSaysWhy) {
    EXPECT_NE(loadTaskSet((root_ / "missing").string()).error.find("does not exist"),
              std::string::npos);
    write("tasks.parquet", "PAR1");
    EXPECT_NE(loadTaskSet((root_ / "tasks.parquet").string()).error.find("pyarrow"),
              std::string::npos);
    write("notes.txt", "hello");
    EXPECT_NE(loadTaskSet((root_ / "notes.txt").string()).error.find("neither"), std::string::npos);
    write("empty/readme.py", "print(1)\n");
    const TaskSetLoad empty = loadTaskSet((root_ / "empty").string());
    EXPECT_FALSE(empty.ok);
    EXPECT_NE(empty.error.find("no task"), std::string::npos);
    EXPECT_NE(empty.error.find("readme.py"), std::string::npos);
    // A link in a task folder is not followed out of it.
    write("outside/secret.py", kTask);
    fs::create_directories(root_ / "linked");
    fs::create_symlink(root_ / "outside" / "secret.py", root_ / "linked" / "secret.py");
    EXPECT_FALSE(loadTaskSet((root_ / "linked").string()).ok);
}

} // namespace
// Writes rows to a parquet file with the task Python's pyarrow (installed by tools/setup.sh).
bool writeParquet(const fs::path& file, const nlohmann::json& columns) {
    ProcessSpec spec;
    spec.argv = {KWB_TEST_EXPECTED_PYTHON, "-c",
                 "import json, sys, pyarrow, pyarrow.parquet as pq\n"
                 "pq.write_table(pyarrow.table(json.loads(sys.argv[2])), sys.argv[1])\n",
                 file.string(), columns.dump()};
    const ProcessResult result = runProcess(spec);
    EXPECT_TRUE(result.succeeded()) << result.statusText() << result.err.text;
    return result.succeeded();
}

TEST_F(TaskSetTest, AParquetFileIsReadThroughTheTaskPythonsPyarrowAndCached) {
    const fs::path parquet = root_ / "ops.parquet";
    ASSERT_TRUE(writeParquet(parquet, {{"code", {kTask, "print('no model')"}},
                                       {"ops", {"[\"torch.relu\", \"nn.Linear\"]", "[]"}},
                                       {"data_source", {"ops-6k", "ops-6k"}},
                                       {"extra", {1, 2}}}));
    const fs::path cache = root_ / "cache";
    const ParquetConversion converted =
        convertParquetTaskRows(parquet.string(), KWB_TEST_EXPECTED_PYTHON, cache.string());
    ASSERT_TRUE(converted.ok) << converted.error;
    const TaskSetLoad set = loadTaskSet(converted.jsonlPath);
    ASSERT_TRUE(set.ok) << set.error;
    ASSERT_EQ(set.set.tasks.size(), 1u);
    EXPECT_EQ(set.set.tasks[0].ops, (std::vector<std::string>{"torch.relu", "nn.Linear"}));
    EXPECT_EQ(set.set.tasks[0].dataSource, "ops-6k");
    ASSERT_EQ(set.set.problems.size(), 1u); // the row without a Model, named
    EXPECT_NE(set.set.problems[0].find("class Model"), std::string::npos);

    // Unchanged file: the same JSON lines, not converted again (a python that cannot run would
    // fail otherwise).
    const ParquetConversion again =
        convertParquetTaskRows(parquet.string(), (root_ / "no-python").string(), cache.string());
    ASSERT_TRUE(again.ok) << again.error;
    EXPECT_EQ(again.jsonlPath, converted.jsonlPath);
}

TEST_F(TaskSetTest, AParquetFileWithoutTaskRowsOrWithoutPyarrowGivesAClearError) {
    const fs::path parquet = root_ / "other.parquet";
    ASSERT_TRUE(writeParquet(parquet, {{"text", {"a", "b"}}}));
    const ParquetConversion noCode =
        convertParquetTaskRows(parquet.string(), KWB_TEST_EXPECTED_PYTHON, (root_ / "c1").string());
    EXPECT_FALSE(noCode.ok);
    EXPECT_NE(noCode.error.find("no \"code\" column; the columns are: text"), std::string::npos)
        << noCode.error;

    // A task Python without pyarrow: the same interpreter with the module hidden.
    const fs::path fake = root_ / "python-without-pyarrow";
    write("python-without-pyarrow",
          std::string("#!/bin/sh\nshift 2\nexec \"") + KWB_TEST_EXPECTED_PYTHON +
              "\" -c 'import sys; sys.modules[\"pyarrow\"] = None; code = sys.argv.pop(1); "
              "exec(compile(code, \"convert\", \"exec\"))' \"$@\"\n");
    fs::permissions(fake, fs::perms::owner_all);
    const ParquetConversion noPyarrow =
        convertParquetTaskRows(parquet.string(), fake.string(), (root_ / "c2").string());
    EXPECT_FALSE(noPyarrow.ok);
    EXPECT_NE(noPyarrow.error.find("needs pyarrow in the task Python"), std::string::npos)
        << noPyarrow.error;

    const ParquetConversion missing = convertParquetTaskRows(
        (root_ / "missing.parquet").string(), KWB_TEST_EXPECTED_PYTHON, (root_ / "c3").string());
    EXPECT_FALSE(missing.ok);
    EXPECT_NE(missing.error.find("is not a file"), std::string::npos);
}

} // namespace kwb::test
