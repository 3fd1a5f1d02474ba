#include "http/response_writer.h"

#include <utility>

namespace nanoserve::http {

ResponseWriter::ResponseWriter(std::shared_ptr<Exchange> exchange, bool keep_alive)
    : exchange_(std::move(exchange)), keep_alive_(keep_alive) {}

namespace {

Response with_headers(Response response, const std::vector<Header>& extra) {
  response.headers.insert(response.headers.end(), extra.begin(), extra.end());
  return response;
}

}  // namespace

void ResponseWriter::send(const Response& response) {
  if (started()) return;
  status_ = response.status;
  complete_ = true;
  exchange_->append(whole_response(with_headers(response, extra_headers_), keep_alive_));
}

bool ResponseWriter::start_stream(const Response& head) {
  if (started()) return false;
  status_ = head.status;
  streaming_ = true;
  return exchange_->append(response_head(with_headers(head, extra_headers_), true, keep_alive_));
}

bool ResponseWriter::write(std::string_view data) {
  if (!streaming_ || complete_) return false;
  if (data.empty()) return !exchange_->client_gone();
  return exchange_->append(chunk(data));
}

bool ResponseWriter::end_stream() {
  if (!streaming_ || complete_) return false;
  complete_ = true;
  return exchange_->append(chunk_end());
}

void ResponseWriter::finish() { exchange_->finish(keep_alive_ && complete_); }

}  // namespace nanoserve::http
