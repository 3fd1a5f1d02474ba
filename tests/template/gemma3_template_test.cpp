// Gemma 3's chat template (google/gemma-3-4b-it's tokenizer_config.json, which its GGUF files
// carry as tokenizer.chat_template) renders as Hugging Face renders it: a system message folded
// into the first user turn, "model" for the assistant, content parts, and raise_exception when
// the roles do not alternate. The expected prompts are Python Jinja2 3.1.6's, configured as HF
// configures it (tests/template/jinja_reference.py's environment(), bos_token "<bos>").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "template/chat_template.h"

namespace nanoserve::templates {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kGemma3Template = R"jinja({{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\n\n' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'image' -%}
                {{ '<start_of_image>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model\n'}}
{%- endif -%}
)jinja";

std::string render_gemma3(const char* messages, bool add_generation_prompt = true) {
  ChatTemplateInputs inputs;
  inputs.messages = Json::parse(messages);
  inputs.add_generation_prompt = add_generation_prompt;
  return ChatTemplate(kGemma3Template, "<bos>", "<eos>").render(inputs);
}

TEST(Gemma3Template, RendersAsHuggingFaceDoes) {
  EXPECT_EQ(render_gemma3(R"([{"role": "user", "content": "Hello!"}])"),
            "<bos><start_of_turn>user\nHello!<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(render_gemma3(R"([{"role": "system", "content": "You are terse."}, {"role": "user", "content": "  Name a prime.  "},
                       {"role": "assistant", "content": "Seven.\n"}, {"role": "user", "content": "Another?"}])"),
            "<bos><start_of_turn>user\nYou are terse.\n\nName a prime.<end_of_turn>\n<start_of_turn>model\nSeven."
            "<end_of_turn>\n<start_of_turn>user\nAnother?<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(render_gemma3(R"([{"role": "user", "content": [{"type": "text", "text": " Look: "}, {"type": "image"},
                                                     {"type": "text", "text": "what is it?"}]}])",
                   false),
            "<bos><start_of_turn>user\nLook:<start_of_image>what is it?<end_of_turn>\n");
  EXPECT_EQ(render_gemma3(R"([{"role": "system", "content": [{"type": "text", "text": "Sys"}]}, {"role": "user", "content": "Hi"}])"),
            "<bos><start_of_turn>user\nSys\n\nHi<end_of_turn>\n<start_of_turn>model\n");
}

TEST(Gemma3Template, RolesThatDoNotAlternateRaiseTheTemplatesMessage) {
  for (const char* messages : {R"([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])",
                               R"([{"role": "assistant", "content": "a"}])"}) {
    try {
      render_gemma3(messages);
      ADD_FAILURE() << "rendered " << messages;
    } catch (const ChatTemplateError& e) {
      EXPECT_STREQ(e.what(), "Conversation roles must alternate user/assistant/user/assistant/...");
    }
  }
}

}  // namespace
}  // namespace nanoserve::templates
