// What every command's model argument (--model, --draft-model, info's MODEL) accepts: a local
// GGUF file, or a Hugging Face model name (hub/model_name.h) that is pulled first, or taken from
// the cache without network when it was pulled before.
#pragma once

#include <string>

#include "hub/hub_client.h"
#include "hub/model_name.h"

namespace nanoserve::cli {

// The file to load for `model`: a path as given, or the pulled file of a name (HF_ENDPOINT,
// HF_TOKEN and HF_HUB_OFFLINE from the environment).
std::string model_file(const std::string& model);
// The pulled file of `name`. Throws for a model split into several files: nanoserve loads one.
std::string model_file(const hub::ModelName& name, const hub::HubConfig& hub);

}  // namespace nanoserve::cli
