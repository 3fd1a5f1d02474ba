#include "template/chat_template.h"

#include "template/jinja_lexer.h"
#include "template/jinja_parser.h"
#include "template/jinja_render.h"

namespace nanoserve::templates {

struct ChatTemplate::Parsed {
  std::string source;  // normalized, for the line:column of render errors
  jinja::Body body;
};

ChatTemplate::ChatTemplate(std::string source, std::string bos_token, std::string eos_token)
    : bos_token_(std::move(bos_token)), eos_token_(std::move(eos_token)) {
  auto parsed = std::make_shared<Parsed>();
  parsed->source = jinja::normalize_source(source);
  try {
    parsed->body = jinja::parse_template(parsed->source);
  } catch (const jinja::TemplateError& e) {
    throw ChatTemplateError(e.what());
  }
  parsed_ = std::move(parsed);
}

ChatTemplate ChatTemplate::chatml() { return ChatTemplate(kChatMlSource, "", "<|im_end|>"); }

ChatTemplate ChatTemplate::raw_text() { return ChatTemplate(kRawTextSource, "", ""); }

std::string ChatTemplate::render(const ChatTemplateInputs& inputs) const {
  if (!inputs.extra.is_object()) throw ChatTemplateError("extra template variables must be a JSON object");
  try {
    jinja::Dict::Entries variables;
    auto set = [&](const std::string& name, jinja::Value value) {
      for (auto& [existing, v] : variables)
        if (existing == name) return void(v = std::move(value));
      variables.emplace_back(name, std::move(value));
    };
    set("messages", jinja::from_json(inputs.messages));
    set("tools", jinja::from_json(inputs.tools));
    set("add_generation_prompt", jinja::Value::boolean(inputs.add_generation_prompt));
    if (!bos_token_.empty()) set("bos_token", jinja::Value::string(bos_token_));
    if (!eos_token_.empty()) set("eos_token", jinja::Value::string(eos_token_));
    for (const auto& [name, value] : inputs.extra.items()) set(name, jinja::from_json(value));
    return jinja::render(parsed_->body, parsed_->source, variables, fixed_now_);
  } catch (const jinja::TemplateError& e) {
    throw ChatTemplateError(e.what());
  }
}

}  // namespace nanoserve::templates
