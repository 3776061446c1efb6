#include "engine/system/resource_paths.h"
#include "engine/workspace/task_catalog.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>

using namespace kwb;
namespace fs = std::filesystem;

TEST(TaskCatalog, BundledTasksCoverTheRequiredCategories) {
    std::vector<std::string> problems;
    std::vector<TaskInfo> tasks = listTasks(bundledTasksDirectory(), &problems);
    EXPECT_TRUE(problems.empty()) << problems.front();
    ASSERT_GE(tasks.size(), 8u);
    std::set<std::string> categories;
    int withSolution = 0;
    for (const auto& task : tasks) {
        categories.insert(task.category);
        EXPECT_NE(task.title, task.id) << task.path << " has no docstring title";
        withSolution += task.solutionDirectory.empty() ? 0 : 1;
    }
    for (const char* required : {"elementwise", "reduction", "softmax", "layernorm", "gemm-fusion",
                                 "conv-fusion", "fusion"})
        EXPECT_TRUE(categories.count(required)) << "no bundled task of category " << required;
    EXPECT_GE(withSolution, 4);
}

TEST(TaskCatalog, SolutionsHaveTheCudaAgentLayout) {
    for (const auto& task : listTasks(bundledTasksDirectory())) {
        if (task.solutionDirectory.empty())
            continue;
        const fs::path dir = task.solutionDirectory;
        EXPECT_TRUE(fs::exists(dir / "model_new.py")) << dir;
        bool hasCu = false, hasBinding = false;
        for (const auto& entry : fs::directory_iterator(dir / "kernels")) {
            const std::string name = entry.path().filename().string();
            hasCu |= entry.path().extension() == ".cu";
            hasBinding |= name.find("_binding.cpp") != std::string::npos;
        }
        EXPECT_TRUE(hasCu) << dir << " has no .cu kernel";
        EXPECT_TRUE(hasBinding) << dir << " has no *_binding.cpp";
    }
}

TEST(TaskCatalog, ReadsDocstringMetadata) {
    const fs::path dir = fs::temp_directory_path() / "kwb-test-catalog";
    fs::remove_all(dir);
    fs::create_directories(dir);
    {
        std::ofstream(dir / "a_task.py")
            << "# comment first\n\"\"\"My title\n\nLonger text.\nCategory: demo\n\"\"\"\n"
               "import torch\nclass Model(torch.nn.Module):\n    pass\n";
        std::ofstream(dir / "b_not_a_task.py") << "print('hello')\n";
        std::ofstream(dir / "c_no_doc.py") << "class Model:\n    pass\n";
        std::ofstream(dir / "readme.txt") << "ignored\n";
    }
    std::vector<std::string> problems;
    std::vector<TaskInfo> tasks = listTasks(dir.string(), &problems);
    ASSERT_EQ(tasks.size(), 2u);
    EXPECT_EQ(tasks[0].id, "a_task");
    EXPECT_EQ(tasks[0].title, "My title");
    EXPECT_EQ(tasks[0].category, "demo");
    EXPECT_EQ(tasks[0].description, "Longer text.");
    EXPECT_TRUE(tasks[0].solutionDirectory.empty());
    EXPECT_EQ(tasks[1].title, "c_no_doc");
    EXPECT_EQ(tasks[1].category, "uncategorized");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("b_not_a_task.py"), std::string::npos);
    fs::remove_all(dir);
}

TEST(TaskCatalog, MissingFolderIsAProblemNotACrash) {
    std::vector<std::string> problems;
    EXPECT_TRUE(listTasks("/nonexistent/tasks", &problems).empty());
    ASSERT_EQ(problems.size(), 1u);
    std::string error;
    EXPECT_TRUE(readTaskInfo("/nonexistent/x.py", &error).id.empty());
    EXPECT_NE(error.find("cannot read"), std::string::npos);
}
