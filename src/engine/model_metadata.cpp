#include "engine/model_metadata.h"

#include <filesystem>

namespace nanoserve::engine {
namespace {

// A string value, or "" when the key is absent or not a string.
std::string optional_string(const gguf::Metadata& metadata, const std::string& key) {
  const gguf::Value* value = metadata.find(key);
  return value && value->type() == gguf::ValueType::STRING ? value->as_string() : std::string();
}

}  // namespace

std::string model_name(const gguf::Metadata& metadata, const std::string& path) {
  std::string name = optional_string(metadata, "general.name");
  return name.empty() ? std::filesystem::path(path).stem().string() : name;
}

std::string chat_template(const gguf::Metadata& metadata) {
  return optional_string(metadata, "tokenizer.chat_template");
}

}  // namespace nanoserve::engine
