#pragma once

#include "agent/llm/conversation.h"
#include "agent/tools/tool.h"

#include <cstddef>
#include <memory>
#include <stop_token>
#include <string_view>
#include <vector>

namespace kwb::agent {

struct ToolRegistryOptions {
    // Most bytes of a result's text the model sees; longer text keeps its head and tail.
    std::size_t outputLimitBytes = 30000;
    // Replaced by "[redacted]" in every result before the model (a remote server) sees it: a
    // tool that prints a file or an error holding a credential must not send it away.
    std::vector<std::string> secrets;
};

// The tools one agent may call, and the one door through which calls reach them. Whatever a
// call does wrong (unknown tool, arguments that are not JSON or do not fit the schema, a tool
// that throws) comes back as an error result named after the tool, never as an exception.
class ToolRegistry {
public:
    explicit ToolRegistry(ToolRegistryOptions options = {});

    // A tool with the same name is replaced.
    void add(std::unique_ptr<Tool> tool);
    Tool* find(std::string_view name) const;
    std::vector<ToolSchema> schemas() const; // in the order the tools were added

    // A call as the model wrote it: the arguments are its raw text.
    ToolResult run(const ToolCall& call, ToolContext& context, std::stop_token stop = {});
    ToolResult run(std::string_view name, const nlohmann::json& arguments, ToolContext& context,
                   std::stop_token stop = {});

    const ToolRegistryOptions& options() const { return options_; }

private:
    ToolResult finish(std::string_view name, ToolResult result) const;

    ToolRegistryOptions options_;
    std::vector<std::unique_ptr<Tool>> tools_;
};

} // namespace kwb::agent
