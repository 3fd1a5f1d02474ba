// What an engine tells the server about its model, read from the GGUF metadata.
#pragma once

#include <string>

#include "engine/engine.h"
#include "gguf/file.h"

namespace nanoserve::engine {

// general.name, or the file's stem when the file has none (as /v1/models lists it).
std::string model_name(const gguf::Metadata& metadata, const std::string& path);
// tokenizer.chat_template, or "" when the file has none.
std::string chat_template(const gguf::Metadata& metadata);
// The architecture, parameter count, file type and size of the model in `file`.
ModelFacts model_facts(const gguf::File& file, const std::string& kv_type = "");

}  // namespace nanoserve::engine
