#include "server/api_client.h"

#include <regex>
#include <stdexcept>

namespace nanoserve::test {
namespace {

JsonResponse to_json_response(const httplib::Result& res) {
  if (!res) throw std::runtime_error("no response: " + httplib::to_string(res.error()));
  JsonResponse out{res->status, nullptr, res->body};
  out.body = nlohmann::json::parse(res->body, nullptr, false);
  if (out.body.is_discarded()) out.body = nullptr;
  return out;
}

}  // namespace

JsonResponse post_raw(httplib::Client& client, const std::string& path, const std::string& body) {
  return to_json_response(client.Post(path.c_str(), body, "application/json"));
}

JsonResponse post_json(httplib::Client& client, const std::string& path, const nlohmann::json& body) {
  return post_raw(client, path, body.dump());
}

JsonResponse get(httplib::Client& client, const std::string& path) { return to_json_response(client.Get(path.c_str())); }

int post_streaming(httplib::Client& client, const std::string& path, const nlohmann::json& body,
                   const std::function<bool(const std::string& data)>& on_data) {
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    return on_data(std::string(data, size));
  };
  const httplib::Result res = client.send(req);
  return res ? res->status : 0;
}

std::vector<std::string> sse_payloads(const std::string& body) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) throw std::runtime_error("an event does not end with a blank line: " + body.substr(pos));
    const std::string event = body.substr(pos, end - pos);
    if (event.rfind("data: ", 0) != 0 || event.find('\n') != std::string::npos)
      throw std::runtime_error("not a single data line: " + event);
    out.push_back(event.substr(6));
    pos = end + 2;
  }
  return out;
}

std::string streamed_text(const std::vector<std::string>& payloads) {
  std::string text;
  for (const auto& p : payloads) {
    if (p == "[DONE]") continue;
    const auto chunk = nlohmann::json::parse(p);
    for (const auto& choice : chunk["choices"]) {
      if (choice.contains("delta") && choice["delta"].contains("content")) text += choice["delta"]["content"];
      if (choice.contains("text")) text += choice["text"];
    }
  }
  return text;
}

double metric_sample(const std::string& metrics_text, const std::string& name) {
  std::smatch m;
  const std::regex sample("(^|\n)" + name + " ([0-9.e+-]+)\n");
  return std::regex_search(metrics_text, m, sample) ? std::stod(m[2]) : -1;
}

}  // namespace nanoserve::test
