#include "lab/quantities.h"

#include <algorithm>

namespace nanoserve::lab {

const std::vector<QuantityInfo>& quantity_infos() {
  using enum QuantitySource;
  static const std::vector<QuantityInfo> infos = {
      {"weight_bytes_per_token", "bytes", "weights one decode step reads (every matrix once)", Model},
      {"model_bytes", "bytes", "the model file's size", Model},
      {"n_layer", "layers", "transformer layers", Model},
      {"kv_layers", "layers", "layers that keep every position's keys and values (sliding-window ones keep "
                              "only their window)", Model},
      {"n_head_kv", "heads", "key/value heads per layer", Model},
      {"head_dim", "values", "values per head", Model},
      {"kv_value_bytes", "bytes", "bytes per cached key or value element (F16: 2, Q8_0: 34/32)", Model},
      {"context_length", "tokens", "the model's trained context", Model},
      {"bandwidth_gb_s", "GB/s", "this machine's memory read bandwidth (measured now, all threads)", Machine},
      {"threads", "threads", "compute threads of the servers", Machine},
      {"prefill_tok_s_short", "tok/s", "prefill rate of a short prompt (engine clock, measured now)", Server},
      {"decode_tok_s_single", "tok/s", "decode rate of one stream alone (engine clock, measured now)", Server},
      {"short_prompt_tokens", "tokens", "the short prompt's length in those two measurements", Server},
      {"health_round_trip_ms", "ms", "one GET /health round trip on a kept-alive connection (median)", Server},
      {"tokens", "tokens", "the prompt's length (fitted to the context)", Procedure},
      {"long_tokens", "tokens", "the longer prompt's length (fitted to the context)", Procedure},
      {"extra_tokens", "tokens", "new tokens after the cached prompt", Procedure},
      {"prompt_tokens", "tokens", "prompt length of each request", Procedure},
      {"max_tokens", "tokens", "tokens each request generates", Procedure},
      {"streams", "streams", "requests sent at once", Procedure},
      {"requests", "requests", "requests measured", Procedure},
      {"lookup_hit_rate", "fraction", "of the prompt's tokens, those that prompt lookup would have guessed from the "
                                      "text before them", Procedure},
  };
  return infos;
}

const QuantityInfo* find_quantity(std::string_view name) {
  const auto& infos = quantity_infos();
  const auto found = std::find_if(infos.begin(), infos.end(), [&](const QuantityInfo& q) { return q.name == name; });
  return found == infos.end() ? nullptr : &*found;
}

}  // namespace nanoserve::lab
