// A model name made into files on disk: from the cache when they are all there (no network at
// all), else from the Hub, each missing file downloaded (resuming a partial one) and checked
// against the size and SHA-256 the Hub states.
#pragma once

#include <filesystem>
#include <vector>

#include "hub/hub_client.h"
#include "hub/model_cache.h"
#include "hub/model_name.h"

namespace nanoserve::hub {

// The files of `name`, a multi-part model's parts in order. Throws std::runtime_error with what
// to do: the Hub unreachable or refusing, a write failing, a checksum not matching (the file
// moved aside to PATH.corrupt and not returned), or HF_HUB_OFFLINE set and the files not here.
std::vector<std::filesystem::path> pull_model(const ModelName& name, const HubConfig& hub, const ModelCache& cache);

}  // namespace nanoserve::hub
