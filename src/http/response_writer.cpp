#include "http/response_writer.h"

#include <utility>

namespace nanoserve::http {

ResponseWriter::ResponseWriter(std::shared_ptr<Exchange> exchange, bool keep_alive, bool head_only)
    : exchange_(std::move(exchange)), keep_alive_(keep_alive), head_only_(head_only) {}

namespace {

// `response` with `extra` headers added; copied only when there are any.
template <typename Write>
auto with_headers(const Response& response, const std::vector<Header>& extra, Write write) {
  if (extra.empty()) return write(response);
  Response more = response;
  more.headers.insert(more.headers.end(), extra.begin(), extra.end());
  return write(more);
}

}  // namespace

void ResponseWriter::send(const Response& response) {
  if (started()) return;
  status_ = response.status;
  complete_ = true;
  with_headers(response, extra_headers_, [&](const Response& r) {
    return exchange_->append(head_only_ ? response_head(r, false, keep_alive_) : whole_response(r, keep_alive_));
  });
}

bool ResponseWriter::start_stream(const Response& head) {
  if (started()) return false;
  status_ = head.status;
  streaming_ = true;
  return with_headers(head, extra_headers_,
                      [&](const Response& r) { return exchange_->append(response_head(r, true, keep_alive_)); });
}

bool ResponseWriter::write(std::string_view data) {
  if (!streaming_ || complete_) return false;
  if (data.empty() || head_only_) return !exchange_->client_gone();
  return exchange_->append(chunk(data));
}

bool ResponseWriter::end_stream() {
  if (!streaming_ || complete_) return false;
  complete_ = true;
  return head_only_ ? !exchange_->client_gone() : exchange_->append(chunk_end());
}

void ResponseWriter::finish() { exchange_->finish(keep_alive_ && complete_); }

}  // namespace nanoserve::http
