// Ollama's API, as Open WebUI, Continue, editors and the ollama SDKs speak it:
//   POST /api/chat, POST /api/generate  answers as NDJSON lines (stream: false: one object)
//   GET /api/tags, GET /api/ps          the served model (the only one: any name a request
//                                       gives is answered by it)
//   POST /api/show                      its template, details, model_info and capabilities
//   GET /api/version                    the Ollama release whose API this follows
// What manages Ollama's model store (pull, push, create, copy, delete) and embeddings answer
// 501 with a message saying so. Errors are {"error": "..."}.
#pragma once

#include "server/api_family.h"

namespace nanoserve::ollama {

server::ApiFamily ollama_api();

}  // namespace nanoserve::ollama
