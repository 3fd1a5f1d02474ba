#include "ollama/ollama_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "grammar/json_schema.h"
#include "server/api_error.h"
#include "server/generation_params.h"
#include "server/json_fields.h"
#include "server/response_format.h"

namespace nanoserve::ollama {
namespace {

using nlohmann::ordered_json;
using server::FieldReader;
using server::invalid_request;

void refuse_if_given(const FieldReader& fields, const std::string& name, const std::string& why) {
  const nlohmann::ordered_json* value = fields.find(name);
  if (!value || (value->is_string() && value->get_ref<const std::string&>().empty()) ||
      (value->is_array() && value->empty()) || (value->is_boolean() && !value->get<bool>()))
    return;
  throw invalid_request(fmt::format("'{}' is not supported: {}", fields.param(name), why), fields.param(name),
                        "unsupported_parameter");
}

// The options Ollama's API shares with the others, by the same names; num_predict is a cap
// (-1 and -2: as many as the context allows).
server::GenerationParams generation_params(const FieldReader& fields, const server::ServerLimits& limits,
                                           uint64_t random_seed, int64_t context_size) {
  server::GenerationParams p;
  const ordered_json none = ordered_json::object();
  const nlohmann::ordered_json* options = fields.object("options");
  const FieldReader o(options ? *options : none, "options");
  p.sampling = server::read_sampling(o, random_seed);
  p.stop = server::read_stop_strings(o, "stop", limits);
  if (const auto n = o.integer("num_predict", -2, std::numeric_limits<int32_t>::max()); n && *n != -1 && *n != -2) {
    if (*n == 0)
      throw invalid_request("'options.num_predict' must be positive, or -1 or -2 for as many as the context allows",
                            "options.num_predict", "out_of_range");
    p.max_tokens = static_cast<int32_t>(std::min<int64_t>(*n, limits.max_tokens));
  }
  p.max_tokens_is_cap = true;
  p.max_tokens_param = "options.num_predict";
  if (const auto n_ctx = o.integer("num_ctx", 1, std::numeric_limits<int64_t>::max()); n_ctx && *n_ctx > context_size)
    throw invalid_request(fmt::format("'options.num_ctx' is {}; the served model's context holds {} tokens (set it "
                                      "with nanoserve serve --ctx)", *n_ctx, context_size),
                          "options.num_ctx", "out_of_range");
  p.stream = fields.boolean("stream").value_or(true);
  // format: "json" (any JSON object) or a JSON schema.
  if (const nlohmann::ordered_json* format = fields.find("format")) {
    if (format->is_object()) {
      p.grammar = server::schema_grammar(*format, "format");
    } else if (*format == "json") {
      p.grammar = std::make_shared<const grammar::Grammar>(grammar::any_json_object_grammar());
    } else if (*format != "") {
      throw invalid_request("'format' must be \"json\" or a JSON schema", "format", "invalid_value");
    }
  }
  refuse_if_given(fields, "logprobs", "ask /v1/chat/completions for logprobs");
  return p;
}

// think: true, false, or an effort ("low", "medium", "high": thinking on).
void read_think(const FieldReader& fields, server::ChatRequest& chat) {
  const nlohmann::ordered_json* think = fields.find("think");
  if (!think) return;
  if (think->is_boolean()) {
    chat.template_kwargs["enable_thinking"] = think->get<bool>();
  } else if (*think == "low" || *think == "medium" || *think == "high") {
    chat.template_kwargs["enable_thinking"] = true;
  } else {
    throw invalid_request("'think' must be true, false, \"low\", \"medium\" or \"high\"", "think", "invalid_value");
  }
}

ordered_json chat_message(const ordered_json& message, const std::string& param) {
  const FieldReader fields(message, param);
  const std::string role = fields.required_string("role");
  if (role != "system" && role != "user" && role != "assistant" && role != "tool")
    throw invalid_request(fmt::format("'{}' must be system, user, assistant or tool", fields.param("role")),
                          fields.param("role"), "invalid_value");
  refuse_if_given(fields, "images", "nanoserve serves text models");
  ordered_json out = {{"role", role}, {"content", fields.string("content").value_or("")}};
  if (role == "assistant") {
    if (auto thinking = fields.string("thinking"); thinking && !thinking->empty()) out["reasoning_content"] = *thinking;
    if (const nlohmann::ordered_json* calls = fields.array("tool_calls")) {
      for (size_t i = 0; i < calls->size(); ++i) {
        const FieldReader call((*calls)[i], fmt::format("{}[{}]", fields.param("tool_calls"), i));
        const nlohmann::ordered_json* function = call.object("function");
        if (!function)
          throw invalid_request(fmt::format("'{}' is required", call.param("function")), call.param("function"),
                                "missing_required_parameter");
        const FieldReader f(*function, call.param("function"));
        const nlohmann::ordered_json* arguments = f.object("arguments");
        out["tool_calls"].push_back(
            {{"type", "function"},
             {"function", {{"name", f.required_string("name")},
                           {"arguments", arguments ? *arguments : ordered_json::object()}}}});
      }
    }
  }
  if (role == "tool")
    if (auto name = fields.string("tool_name")) out["name"] = *name;
  return out;
}

OllamaRequest common(const FieldReader& fields, const server::ServerLimits& limits, uint64_t random_seed,
                     int64_t context_size) {
  OllamaRequest r;
  r.model = fields.required_string("model");
  r.chat.params = generation_params(fields, limits, random_seed, context_size);
  read_think(fields, r.chat);
  fields.find("keep_alive");  // the model stays loaded for as long as the server runs
  return r;
}

}  // namespace

OllamaRequest parse_chat(const nlohmann::ordered_json& body, const server::ServerLimits& limits, uint64_t random_seed,
                         int64_t context_size) {
  const FieldReader fields(body);
  OllamaRequest r = common(fields, limits, random_seed, context_size);
  const nlohmann::ordered_json* messages = fields.array("messages");
  if (!messages || messages->empty()) {
    r.load_only = true;
    return r;
  }
  server::check_size(*messages, limits.max_messages, "messages", "too_many_messages");
  for (size_t i = 0; i < messages->size(); ++i)
    r.chat.messages.push_back(chat_message((*messages)[i], fmt::format("messages[{}]", i)));
  r.chat.tools = server::parse_tools(fields, limits);
  return r;
}

OllamaRequest parse_generate(const nlohmann::ordered_json& body, const server::ServerLimits& limits,
                             uint64_t random_seed, int64_t context_size) {
  const FieldReader fields(body);
  OllamaRequest r = common(fields, limits, random_seed, context_size);
  refuse_if_given(fields, "suffix", "fill-in-the-middle is not supported");
  refuse_if_given(fields, "template", "the model's own chat template is used (or raw: true for none)");
  refuse_if_given(fields, "context", "send the conversation to /api/chat instead");
  refuse_if_given(fields, "images", "nanoserve serves text models");
  const std::string prompt = fields.string("prompt").value_or("");
  const std::optional<std::string> system = fields.string("system");
  if (fields.boolean("raw").value_or(false)) {
    if (system && !system->empty())
      throw invalid_request("'system' cannot be used with raw: a raw prompt is sent as it is", "system",
                            "unsupported_combination");
    r.raw_prompt = prompt;
  } else {
    if (system && !system->empty()) r.chat.messages.push_back({{"role", "system"}, {"content", *system}});
    r.chat.messages.push_back({{"role", "user"}, {"content", prompt}});
  }
  r.load_only = prompt.empty();
  return r;
}

}  // namespace nanoserve::ollama
