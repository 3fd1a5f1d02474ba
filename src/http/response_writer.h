// What a route's handler answers through: a whole response, or a stream of chunks.
#pragma once

#include <memory>
#include <string_view>

#include "http/exchange.h"
#include "http/response.h"

namespace nanoserve::http {

class ResponseWriter {
 public:
  // `head_only` (a HEAD request): answers carry their head alone, Content-Length included.
  ResponseWriter(std::shared_ptr<Exchange> exchange, bool keep_alive, bool head_only);

  void send(const Response& response);  // the whole answer (once)
  // A chunked answer: `head`'s status and headers now (its body is ignored), then write()
  // each piece, then end_stream(). Each returns false once the client is gone.
  bool start_stream(const Response& head);
  bool write(std::string_view data);
  bool end_stream();

  // A header every answer through this writer carries besides its own (CORS).
  void add_header(Header header) { extra_headers_.push_back(std::move(header)); }

  bool client_gone() const { return exchange_->client_gone(); }
  bool started() const { return status_ != 0; }
  int status() const { return status_; }  // 0 until something was sent

  // After the handler: completes the exchange. An unfinished stream closes the connection
  // (its client cannot tell where the answer ended otherwise).
  void finish();

 private:
  std::shared_ptr<Exchange> exchange_;
  const bool keep_alive_;
  const bool head_only_;
  std::vector<Header> extra_headers_;
  int status_ = 0;
  bool streaming_ = false;
  bool complete_ = false;
};

}  // namespace nanoserve::http
