// Chat templates: the Jinja template a model ships (tokenizer.chat_template) turns a list
// of messages into the prompt text, exactly as Hugging Face's apply_chat_template does.
// The interpreter (jinja_*.h) is our own Jinja subset, big enough for the templates of the
// Qwen2.5, Qwen3 and Llama 3 families, with HF's settings (trim_blocks, lstrip_blocks,
// tojson without HTML escaping, raise_exception and strftime_now).
#pragma once

#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

namespace nanoserve::templates {

// Parse errors say "line L:C: " and what was expected; render errors say the message
// (with the line:column of the failing expression, except raise_exception's own message).
struct ChatTemplateError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ordered_json, not json: templates print tool schemas with tojson, and Hugging Face keeps
// the keys in the order the request gave them ({"type": ..., "function": ...}); a json
// (std::map) object would sort them and change the prompt. Parse requests as ordered_json.
struct ChatTemplateInputs {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;  // null when absent (the template sees none)
  bool add_generation_prompt = true;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // extra top-level variables, e.g. enable_thinking
};

// The ChatML template (Qwen's turn format): what a model without a template of its own gets,
// and what synthesized models carry when they have no tokenizer_config.json beside them.
inline constexpr const char* kChatMlSource =
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

// The messages' text alone, one after another: what a base model (GPT-2, a byte-level model
// trained from scratch) is prompted with when it has no template and no ChatML tokens.
inline constexpr const char* kRawTextSource =
    "{%- for message in messages %}"
    "{{- message['content'] }}{%- if not loop.last %}{{- '\\n' }}{%- endif %}"
    "{%- endfor %}";

class ChatTemplate {
 public:
  // Parses the Jinja source once (throws ChatTemplateError). The template sees the tokens as
  // `bos_token` and `eos_token`; an empty one stays undefined, as HF leaves a token the
  // tokenizer does not have (Qwen has no BOS).
  ChatTemplate(std::string source, std::string bos_token, std::string eos_token);
  // The ChatML template (used, with a log line by the caller, when a model has none).
  static ChatTemplate chatml();
  // The raw-text template (kRawTextSource).
  static ChatTemplate raw_text();

  // Thread-safe; throws ChatTemplateError. `extra` keys override the other variables.
  std::string render(const ChatTemplateInputs& inputs) const;

  // strftime_now() formats this local time instead of reading the clock (reproducible prompts).
  void set_fixed_now(const std::tm& local_time) { fixed_now_ = local_time; }

 private:
  struct Parsed;  // the syntax tree, shared by copies (it is never changed after parsing)
  std::shared_ptr<const Parsed> parsed_;
  std::string bos_token_;
  std::string eos_token_;
  std::optional<std::tm> fixed_now_;
};

}  // namespace nanoserve::templates
