// A model server's streamed reply, as bytes off the wire: SSE framing, then both APIs' stream
// decoders, then what the agent does with the result (tool arguments parsed, stored as JSON).
#include "agent/llm/conversation.h"
#include "agent/providers/anthropic_messages_format.h"
#include "agent/providers/openai_chat_format.h"
#include "agent/providers/sse_parser.h"
#include "agent/store/episode_record.h"
#include "tests/fuzz/fuzz_input.h"

using namespace kwb::agent;

namespace {
template <typename Decoder>
void decode(std::string_view bytes, std::size_t split) {
    NullStreamSink sink;
    Decoder decoder(sink);
    SseParser parser;
    for (std::string_view piece : {bytes.substr(0, split), bytes.substr(split)})
        for (const SseEvent& event : parser.feed(piece))
            if (!decoder.onEvent(event))
                return;
    (void)parser.hasPartialEvent();
    if (!decoder.finished() || decoder.failure())
        return;
    CompletionResult result = decoder.takeResult();
    for (const ToolCall& call : result.toolCalls)
        (void)call.parsedArguments().dump();
    (void)messageToJson(Message::assistant(result.text, result.toolCalls)).dump();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0)
        return 0;
    const std::string_view bytes = kwb::fuzz::asText(data + 1, size - 1);
    const std::size_t split = bytes.empty() ? 0 : data[0] % (bytes.size() + 1);
    decode<OpenAiChatStreamDecoder>(bytes, split);
    decode<AnthropicMessagesStreamDecoder>(bytes, split);
    return 0;
}
