// Chat formats by family; SmolLM2's real template against transformers' apply_chat_template is
// in model.reference.
#include "engine/model/chat_template.h"

#include <gtest/gtest.h>

namespace kwb::model {
namespace {

TEST(ChatTemplate, ChatMlTakesTheDefaultSystemPromptFromTheTemplate) {
    const std::string text =
        "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
        "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
        "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
        "{% endfor %}";
    std::string error;
    const auto t = ChatTemplate::fromTemplateText(text, &error);
    ASSERT_TRUE(t) << error;
    EXPECT_EQ(t->family(), ChatTemplate::Family::ChatMl);
    EXPECT_EQ(t->defaultSystemPrompt(), "You are a helpful assistant.");
    EXPECT_EQ(t->render({{"user", "hi"}}, true),
              "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
              "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    // A conversation with its own system turn gets no default.
    EXPECT_EQ(t->render({{"system", "S"}, {"user", "U"}}, false),
              "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n");
    EXPECT_EQ(t->endOfTurn(), "<|im_end|>");
}

TEST(ChatTemplate, Llama3HeadersTrimmedContentAndEndOfTurn) {
    std::string error;
    const auto t = ChatTemplate::fromTemplateText(
        "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' }}", &error);
    ASSERT_TRUE(t) << error;
    EXPECT_EQ(t->family(), ChatTemplate::Family::Llama3);
    EXPECT_EQ(t->render({{"user", "  hi \n"}}, true),
              "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\n");
    EXPECT_EQ(t->endOfTurn(), "<|eot_id|>");
}

TEST(ChatTemplate, AnotherFamilyIsNamedNotGuessed) {
    std::string error;
    EXPECT_FALSE(ChatTemplate::fromTemplateText("[INST] {{ message }} [/INST]", &error));
    EXPECT_NE(error.find("neither ChatML nor Llama 3"), std::string::npos);
    EXPECT_FALSE(ChatTemplate::fromTemplateText("", &error));
    EXPECT_NE(error.find("no chat template"), std::string::npos);
}

} // namespace
} // namespace kwb::model
