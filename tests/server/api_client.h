// Small helpers for talking to a served API in tests: JSON posts and SSE streams.
#pragma once

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace nanoserve::test {

struct JsonResponse {
  int status = 0;
  nlohmann::json body;  // null when the body is not JSON
  std::string text;     // the raw body
};

JsonResponse post_json(httplib::Client& client, const std::string& path, const nlohmann::json& body);
JsonResponse post_raw(httplib::Client& client, const std::string& path, const std::string& body);
JsonResponse get(httplib::Client& client, const std::string& path);

// POSTs `body` and hands each piece of the (streamed) response body to `on_data`; when it
// returns false the client drops the connection. Returns the status (0 when cancelled).
int post_streaming(httplib::Client& client, const std::string& path, const nlohmann::json& body,
                   const std::function<bool(const std::string& data)>& on_data);

// The `data:` payloads of an event stream, in order ("[DONE]" included). Throws when the
// body is not a sequence of "data: ...\n\n" events.
std::vector<std::string> sse_payloads(const std::string& body);

// The concatenated delta.content of chat chunks (or text of completion chunks).
std::string streamed_text(const std::vector<std::string>& payloads);

// The value of an unlabelled sample in a /metrics text; -1 when absent.
double metric_sample(const std::string& metrics_text, const std::string& name);

}  // namespace nanoserve::test
