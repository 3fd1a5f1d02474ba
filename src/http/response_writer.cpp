#include "http/response_writer.h"

#include <utility>

namespace nanoserve::http {

ResponseWriter::ResponseWriter(std::shared_ptr<Exchange> exchange, bool keep_alive)
    : exchange_(std::move(exchange)), keep_alive_(keep_alive) {}

void ResponseWriter::send(const Response& response) {
  if (started()) return;
  status_ = response.status;
  complete_ = true;
  exchange_->append(whole_response(response, keep_alive_));
}

bool ResponseWriter::start_stream(const Response& head) {
  if (started()) return false;
  status_ = head.status;
  streaming_ = true;
  return exchange_->append(response_head(head, true, keep_alive_));
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
