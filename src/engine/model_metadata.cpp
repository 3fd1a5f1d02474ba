#include "engine/model_metadata.h"

#include <filesystem>

#include "gguf/file_type.h"

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

ModelFacts model_facts(const gguf::File& file, const std::string& kv_type) {
  ModelFacts facts{.architecture = optional_string(file.metadata(), "general.architecture"), .parameters = 0,
                   .file_type = "", .file_bytes = file.file_size(), .kv_type = kv_type};
  for (const gguf::TensorInfo& t : file.tensors()) facts.parameters += t.n_elements();
  const gguf::Value* type = file.metadata().find("general.file_type");
  if (type && type->is_integer())
    if (auto known = gguf::file_type_by_id(static_cast<uint32_t>(type->as_u64()))) facts.file_type = known->name;
  return facts;
}

}  // namespace nanoserve::engine
