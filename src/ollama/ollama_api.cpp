#include "ollama/ollama_api.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <string>
#include <utility>

#include "engine/prompt.h"
#include "ollama/ollama_request.h"
#include "ollama/ollama_response.h"
#include "server/answer_relay.h"
#include "server/api_error.h"
#include "server/chat_generation.h"
#include "server/json_fields.h"
#include "server/request_id.h"
#include "server/request_log.h"
#include "server/response_json.h"

namespace nanoserve::ollama {
namespace {

using nlohmann::ordered_json;
using server::AnswerPieces;
using server::RelayEnd;

// The Ollama release whose API this follows: clients compare it before using newer fields.
constexpr const char* kOllamaApiVersion = "0.12.0";

void answer(http::ResponseWriter& res, server::ServerState& state, const server::ServedModel& model,
            OllamaRequest request, bool chat) {
  const AnswerHead head{.model = request.model, .chat = chat};
  const bool streamed = request.chat.params.stream;
  if (request.load_only) return res.send(server::json_response(load_line(head)));
  std::string id = server::random_request_id(chat ? "chat-" : "generate-");
  server::this_thread_request_log().id = id;
  server::ChatGeneration generation;
  if (request.raw_prompt) {
    generation.request = server::prepare_text_generation(
        model, engine::text_prompt_tokens(model.engine().tokenizer(), *request.raw_prompt), request.chat.params,
        std::move(id), state.limits(), "prompt");
  } else {
    generation = server::prepare_chat_generation(model, request.chat, std::move(id), state.limits());
  }
  auto stream = model.engine().submit(std::move(generation.request));
  if (streamed)
    res.start_stream({.status = 200, .content_type = "application/x-ndjson", .headers = {}, .body = {}});
  auto write_line = [&res](const ordered_json& line) { return res.write(server::json_text(line) + "\n"); };
  AnswerPieces whole;
  const RelayEnd end = server::relay_answer(
      state, std::move(stream), std::move(generation.readers),
      [&](AnswerPieces pieces) {
        if (streamed) return write_line(piece_line(head, pieces));
        whole.append(std::move(pieces));
        return true;
      },
      [&res] { return !res.client_gone(); });
  if (end.kind == RelayEnd::Kind::ClientGone) return;
  if (end.kind == RelayEnd::Kind::Failed) {
    const server::ApiError error = server::generation_failed(end.error);
    if (!streamed) throw error;
    write_line(ollama_error_body(error));
    res.end_stream();
    return;
  }
  const auto total = server::Clock::now() - server::this_thread_request_log().received;
  const ordered_json last = final_line(head, whole, end, total);
  if (!streamed) return res.send(server::json_response(last));
  write_line(last);
  res.end_stream();
}

void chat(const http::Request& req, http::ResponseWriter& res, server::ServerState& state) {
  auto model = state.loaded_model();
  const auto body = server::parse_json_body(req.body, state.limits().max_json_depth);
  answer(res, state, *model, parse_chat(body, state.limits(), server::random_seed(), model->engine().context_size()),
         true);
}

void generate(const http::Request& req, http::ResponseWriter& res, server::ServerState& state) {
  auto model = state.loaded_model();
  const auto body = server::parse_json_body(req.body, state.limits().max_json_depth);
  answer(res, state, *model,
         parse_generate(body, state.limits(), server::random_seed(), model->engine().context_size()), false);
}

// "494.0M", "1.5B": parameters as Ollama shows them.
std::string parameter_size(uint64_t n) {
  const auto x = static_cast<double>(n);
  if (x >= 1e9) return fmt::format("{:.1f}B", x / 1e9);
  if (x >= 1e6) return fmt::format("{:.1f}M", x / 1e6);
  return fmt::format("{:.1f}K", x / 1e3);
}

ordered_json details(const engine::ModelFacts& facts) {
  return {{"parent_model", ""}, {"format", "gguf"}, {"family", facts.architecture},
          {"families", ordered_json::array({facts.architecture})}, {"parameter_size", parameter_size(facts.parameters)},
          {"quantization_level", facts.file_type}};
}

ordered_json model_entry(const server::ServedModel& model) {
  const engine::ModelFacts facts = model.engine().model_facts();
  return {{"name", model.name()}, {"model", model.name()},
          {"modified_at", rfc3339(std::chrono::system_clock::from_time_t(model.created()))},
          {"size", facts.file_bytes}, {"digest", ""}, {"details", details(facts)}};
}

void tags(http::ResponseWriter& res, server::ServerState& state) {
  res.send(server::json_response({{"models", ordered_json::array({model_entry(*state.loaded_model())})}}));
}

void running(http::ResponseWriter& res, server::ServerState& state) {
  auto model = state.loaded_model();
  ordered_json entry = model_entry(*model);
  entry["expires_at"] = "0001-01-01T00:00:00Z";  // never: it stays loaded while the server runs
  entry["size_vram"] = 0;
  entry["context_length"] = model->engine().context_size();
  res.send(server::json_response({{"models", ordered_json::array({std::move(entry)})}}));
}

void show(const http::Request& req, http::ResponseWriter& res, server::ServerState& state) {
  auto model = state.loaded_model();
  const auto body = server::parse_json_body(req.body, state.limits().max_json_depth);
  const server::FieldReader fields(body);
  if (!fields.string("model") && !fields.string("name"))
    throw server::invalid_request("'model' is required", "model", "missing_required_parameter");
  const engine::ModelFacts facts = model->engine().model_facts();
  ordered_json capabilities = {"completion"};
  if (model->engine().chat_template().find("tools") != std::string::npos) capabilities.push_back("tools");
  if (model->thinks()) capabilities.push_back("thinking");
  ordered_json info = {{"general.architecture", facts.architecture},
                       {"general.parameter_count", facts.parameters},
                       {facts.architecture + ".context_length", model->engine().context_size()}};
  const ordered_json shown = {{"license", ""},
                              {"modelfile", ""},
                              {"parameters", ""},
                              {"template", model->engine().chat_template()},
                              {"system", ""},
                              {"details", details(facts)},
                              {"messages", ordered_json::array()},
                              {"model_info", std::move(info)},
                              {"capabilities", std::move(capabilities)},
                              {"modified_at", rfc3339(std::chrono::system_clock::from_time_t(model->created()))}};
  res.send(server::json_response(shown));
}

[[noreturn]] void not_served(const std::string& what) {
  throw server::ApiError(501, fmt::format("{} is not supported: nanoserve serves the one model it was started with "
                                          "(nanoserve serve --model FILE.gguf)", what), "invalid_request_error");
}

}  // namespace

server::ApiFamily ollama_api() {
  using http::Request;
  using http::ResponseWriter;
  auto routes = [](server::ServerState& state) {
    auto route = [&state](std::string method, std::string path, auto handler) {
      return http::Route{
          .method = std::move(method), .path = std::move(path),
          .handler = [&state, handler](const Request& req, ResponseWriter& res) { handler(req, res, state); },
          .on_event_loop = false};
    };
    std::vector<http::Route> out = {
        route("POST", "/api/chat", chat),
        route("POST", "/api/generate", generate),
        route("GET", "/api/tags", [](const Request&, ResponseWriter& res, server::ServerState& s) { tags(res, s); }),
        route("GET", "/api/ps", [](const Request&, ResponseWriter& res, server::ServerState& s) { running(res, s); }),
        route("POST", "/api/show", show),
        route("GET", "/api/version",
              [](const Request&, ResponseWriter& res, server::ServerState&) {
                res.send(server::json_response({{"version", kOllamaApiVersion}}));
              }),
    };
    for (const auto& [method, path, what] :
         {std::tuple{"POST", "/api/pull", "pulling models"}, {"POST", "/api/push", "pushing models"},
          {"POST", "/api/create", "creating models"}, {"POST", "/api/copy", "copying models"},
          {"DELETE", "/api/delete", "deleting models"}, {"POST", "/api/embed", "embeddings"},
          {"POST", "/api/embeddings", "embeddings"}})
      out.push_back(route(method, path, [what = std::string(what)](const Request&, ResponseWriter&,
                                                                   server::ServerState&) { not_served(what); }));
    return out;
  };
  return {.path_prefixes = {"/api/"}, .error_body = ollama_error_body, .routes = routes};
}

}  // namespace nanoserve::ollama
