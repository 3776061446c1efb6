#include "agent/tools/files/file_tools.h"
#include "agent/tools/tool_arguments.h"

using nlohmann::json;

namespace kwb::agent {
namespace {

std::string formatTodos(const std::vector<TodoItem>& todos) {
    if (todos.empty())
        return "the todo list is empty";
    std::size_t done = 0;
    std::string lines;
    for (const auto& item : todos) {
        done += item.status == "completed";
        const char* box = item.status == "completed"     ? "[x] "
                          : item.status == "in_progress" ? "[>] "
                                                         : "[ ] ";
        lines += box + item.content + "\n";
    }
    return "todo list (" + std::to_string(done) + " of " + std::to_string(todos.size()) +
           " done):\n" + lines;
}

class TodoWriteTool : public Tool {
public:
    TodoWriteTool() {
        const json item = {
            {"type", "object"},
            {"properties",
             {{"content", {{"type", "string"}, {"description", "the task, imperative"}}},
              {"status", {{"type", "string"}, {"enum", {"pending", "in_progress", "completed"}}}},
              {"activeForm",
               {{"type", "string"}, {"description", "the task as in progress (\"Fusing ...\")"}}}}},
            {"required", {"content", "status"}}};
        schema_ = objectSchema(
            "TodoWrite",
            "Replaces your todo list with the one given and shows it. Use it to plan multi-step "
            "work and to track it: one task in_progress at a time, mark tasks completed as soon "
            "as they are done.",
            {{"todos", {{"type", "array"}, {"items", item}, {"description", "the whole list"}}}},
            {"todos"});
    }

    const ToolSchema& schema() const override { return schema_; }

    ToolResult run(const json& args, ToolContext& context, std::stop_token) override {
        std::vector<TodoItem> todos;
        for (const auto& entry : args["todos"]) {
            TodoItem item{entry["content"].get<std::string>(), entry["status"].get<std::string>(),
                          entry.value("activeForm", std::string())};
            if (item.content.empty())
                return ToolResult::error("a todo's content is empty");
            todos.push_back(std::move(item));
        }
        context.todos = std::move(todos);
        json data = json::array();
        for (const auto& item : context.todos)
            data.push_back({{"content", item.content},
                            {"status", item.status},
                            {"activeForm", item.activeForm}});
        return ToolResult::success(formatTodos(context.todos), {{"todos", data}});
    }

private:
    ToolSchema schema_;
};

} // namespace

std::unique_ptr<Tool> makeTodoWriteTool() {
    return std::make_unique<TodoWriteTool>();
}

} // namespace kwb::agent
