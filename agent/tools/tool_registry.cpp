#include "agent/tools/tool_registry.h"

#include "agent/llm/api_key.h"
#include "agent/tools/files/valid_utf8.h"
#include "agent/tools/tool_arguments.h"
#include "engine/process/head_tail_capper.h"

#include <exception>

using nlohmann::json;

namespace kwb::agent {
namespace {

// Structured data goes to trajectories and the GUI; a string with invalid UTF-8 would make
// their JSON encoder throw later, far from the tool that produced it.
void makeStringsValid(json& value) {
    if (value.is_string()) {
        value = toValidUtf8(value.get_ref<const std::string&>());
    } else if (value.is_structured()) {
        for (auto& item : value)
            makeStringsValid(item);
    }
}

} // namespace

ToolRegistry::ToolRegistry(ToolRegistryOptions options) : options_(options) {}

void ToolRegistry::add(std::unique_ptr<Tool> tool) {
    for (auto& existing : tools_)
        if (existing->name() == tool->name()) {
            existing = std::move(tool);
            return;
        }
    tools_.push_back(std::move(tool));
}

Tool* ToolRegistry::find(std::string_view name) const {
    for (const auto& tool : tools_)
        if (tool->name() == name)
            return tool.get();
    return nullptr;
}

std::vector<ToolSchema> ToolRegistry::schemas() const {
    std::vector<ToolSchema> result;
    for (const auto& tool : tools_)
        result.push_back(tool->schema());
    return result;
}

ToolResult ToolRegistry::run(const ToolCall& call, ToolContext& context, std::stop_token stop) {
    const json arguments = call.parsedArguments();
    if (arguments.is_discarded()) {
        const HeadTailCapper::Capped shown = capHeadTail(call.argumentsJson, 200);
        return finish(call.name, ToolResult::invalid("the arguments are not valid JSON: " +
                                                     toValidUtf8(shown.text)));
    }
    return run(call.name, arguments, context, stop);
}

ToolResult ToolRegistry::run(std::string_view name, const json& arguments, ToolContext& context,
                             std::stop_token stop) {
    Tool* tool = find(name);
    if (!tool) {
        std::string names;
        for (const auto& t : tools_)
            names += (names.empty() ? "" : ", ") + t->name();
        return finish({}, ToolResult::invalid("unknown tool '" + toValidUtf8(name) +
                                              "'; the tools are: " + names));
    }
    if (std::string problem = checkArguments(tool->schema().parameters, arguments);
        !problem.empty())
        return finish(name, ToolResult::invalid(problem));
    try {
        return finish(name, tool->run(arguments, context, stop));
    } catch (const std::exception& error) {
        return finish(name, ToolResult::error(std::string("internal error: ") + error.what()));
    } catch (...) {
        return finish(name, ToolResult::error("internal error"));
    }
}

ToolResult ToolRegistry::finish(std::string_view name, ToolResult result) const {
    std::string text = result.text;
    if (result.isError && !name.empty() && text.rfind(std::string(name) + ": ", 0) != 0)
        text = std::string(name) + ": " + text;
    if (!options_.secrets.empty())
        text = redactSecrets(text, options_.secrets);
    HeadTailCapper::Capped limited = capHeadTail(toValidUtf8(text), options_.outputLimitBytes);
    result.text = std::move(limited.text);
    result.truncated = result.truncated || limited.truncated();
    makeStringsValid(result.data);
    return result;
}

} // namespace kwb::agent
