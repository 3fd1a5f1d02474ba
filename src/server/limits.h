// Bounds on every size a client controls. The serve command sets them from flags; the
// request parsers and the HTTP server enforce them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nanoserve::server {

struct ServerLimits {
  size_t max_body_bytes = 8u << 20;  // request body; larger ones get 413 before they are read
  int max_json_depth = 64;           // nesting of arrays and objects in a request body
  size_t max_messages = 1024;        // chat messages per request
  size_t max_content_parts = 256;    // content parts per message
  size_t max_tools = 128;            // tool definitions per request
  int64_t max_choices = 16;          // n: choices per request (each a sequence in the engine)
  size_t max_stop_strings = 16;      // OpenAI allows 4; a few more cost nothing
  size_t max_stop_bytes = 256;       // per stop string
  // logit_bias entries. Benchmarks ban every token that ends inside a UTF-8 character (its
  // text waits for the next token): 1263 in Qwen's vocabulary, 1076 in Llama 3's.
  size_t max_logit_bias = 2048;
  int32_t max_tokens = 4096;         // new tokens per request (the context may allow fewer)
};

}  // namespace nanoserve::server
