// The chat template of a model without one (engine::model_chat_template): ChatML where the
// vocabulary has ChatML's tokens, else the messages' raw text, as a base model (GPT-2, a
// byte-level model trained from scratch) is prompted; and ChatML when a template cannot be read.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "engine/prompt.h"
#include "gguf/file.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {
namespace {

templates::ChatTemplateInputs conversation() {
  templates::ChatTemplateInputs inputs;
  inputs.messages = nlohmann::ordered_json::parse(
      R"([{"role": "system", "content": "def add(a, b):"}, {"role": "user", "content": "    return a + b"}])");
  return inputs;
}

TEST(ChatFallback, AVocabularyWithChatMlTokensGetsChatMl) {
  const auto tok = tokenizer::Tokenizer::from_gguf(
      gguf::File::open(nanoserve::test::shared_path("golden/models/tiny-qwen3-F16.gguf")).metadata());
  const std::string chatml =
      "<|im_start|>system\ndef add(a, b):<|im_end|>\n<|im_start|>user\n    return a + b<|im_end|>\n"
      "<|im_start|>assistant\n";
  EXPECT_EQ(model_chat_template("", tok).render(conversation()), chatml);
  EXPECT_EQ(model_chat_template("{% for %}", tok).render(conversation()), chatml);  // unreadable: the fallback
}

TEST(ChatFallback, AVocabularyWithoutThemGetsTheRawText) {
  const auto tok = tokenizer::Tokenizer::from_hf_file(nanoserve::test::shared_path("tokenizers/llama3/tokenizer.json"));
  const std::string text = model_chat_template("", tok).render(conversation());
  EXPECT_EQ(text, "def add(a, b):\n    return a + b");
  // Tokenized as the completions route tokenizes the same text: no marker, no special token.
  EXPECT_EQ(chat_prompt_tokens(model_chat_template("", tok), tok, conversation()), text_prompt_tokens(tok, text));
}

}  // namespace
}  // namespace nanoserve::engine
