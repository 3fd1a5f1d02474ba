#include "lab/procedure.h"

#include <algorithm>

#include "lab/procedures.h"

namespace nanoserve::lab {

const std::vector<ProcedureInfo>& procedure_infos() {
  using nlohmann::json;
  static const std::vector<ProcedureInfo> infos = {
      {"decode_rate", "one stream's decode rate (engine clock), the median of a few requests",
       json{{"prompt_tokens", 32}, {"max_tokens", 128}, {"requests", 3}},
       {"prompt_tokens", "max_tokens", "requests"}, {}, make_decode_rate},
      {"streams", "N streams at once: aggregate and per-stream rates, batch engine then sequential engine",
       json{{"streams", 8}, {"prompt_tokens", 32}, {"max_tokens", 64}},
       {"streams", "prompt_tokens", "max_tokens"}, {"rows_per_step"}, make_streams},
      {"peak_memory", "the server's peak resident memory after one prompt of each length (a fresh server each), MB",
       json{{"tokens", {4096, 16384}}, {"max_tokens", 4}}, {"tokens", "long_tokens"}, {"tokens"}, make_peak_memory},
      {"ttft", "time to first token of one prompt of each length (client clock), ms",
       json{{"tokens", {4096, 16384}}, {"max_tokens", 2}}, {"tokens", "long_tokens"}, {"tokens"}, make_ttft},
      {"server_overhead", "client TTFT minus engine TTFT on the same request (median), ms",
       json{{"requests", 10}, {"prompt_tokens", 16}, {"max_tokens", 8}},
       {"requests", "prompt_tokens", "max_tokens"}, {}, make_server_overhead},
      {"prefix_cache", "TTFT of a prompt cold, resent exactly, and resent with new tokens after it, ms",
       json{{"tokens", 2048}, {"extra_tokens", 16}, {"max_tokens", 4}}, {"tokens", "extra_tokens"},
       {"uncached_tokens"}, make_prefix_cache},
      {"speculation", "tokens per read of the weights continuing a source file, --spec lookup then off",
       json{{"source", "/usr/lib/python3.11/argparse.py"}, {"prompt_tokens", 256}, {"max_tokens", 128}},
       {"prompt_tokens", "max_tokens", "lookup_hit_rate"}, {"drafting"}, make_speculation},
  };
  return infos;
}

const ProcedureInfo* find_procedure(const std::string& name) {
  const auto& infos = procedure_infos();
  const auto found = std::find_if(infos.begin(), infos.end(), [&](const ProcedureInfo& p) { return p.name == name; });
  return found == infos.end() ? nullptr : &*found;
}

}  // namespace nanoserve::lab
