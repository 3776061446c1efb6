// The arguments a model wrote for a tool call: parsed and checked against every default tool's
// schema, as ToolRegistry does before any tool runs.
#include "agent/llm/conversation.h"
#include "agent/tools/default_tools.h"
#include "agent/tools/tool_arguments.h"
#include "agent/tools/tool_registry.h"
#include "tests/fuzz/fuzz_input.h"

using namespace kwb::agent;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::vector<ToolSchema> schemas = [] {
        ToolRegistry registry;
        addDefaultTools(registry);
        return registry.schemas();
    }();
    ToolCall call;
    call.id = "fuzz";
    call.name = "Edit";
    call.argumentsJson = std::string(kwb::fuzz::asText(data, size));
    const nlohmann::json arguments = call.parsedArguments();
    if (arguments.is_discarded())
        return 0;
    for (const ToolSchema& schema : schemas)
        (void)checkArguments(schema.parameters, arguments);
    return 0;
}
