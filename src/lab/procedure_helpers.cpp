#include "lab/procedure_helpers.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "bench/timing.h"

namespace nanoserve::lab {

int parameter_int(const nlohmann::json& parameters, const std::string& name) {
  return parameters.at(name).get<int>();
}

std::vector<int64_t> parameter_ints(const nlohmann::json& parameters, const std::string& name) {
  return parameters.at(name).get<std::vector<int64_t>>();
}

FittedLengths fit_lengths(const std::vector<int64_t>& wanted, int64_t limit, const std::string& why) {
  const int64_t longest = *std::max_element(wanted.begin(), wanted.end());
  if (longest <= limit) return {wanted, ""};
  FittedLengths fitted;
  std::string from, to;
  for (const int64_t n : wanted) {
    fitted.lengths.push_back(std::max<int64_t>(1, n * limit / longest));
    from += (from.empty() ? "" : ", ") + std::to_string(n);
    to += (to.empty() ? "" : ", ") + std::to_string(fitted.lengths.back());
  }
  fitted.note = fmt::format("{}: prompts of {} tokens become {} (scaled alike, so their ratios hold)", why, from, to);
  return fitted;
}

int64_t prompt_limit(const LabContext& lab, int64_t max_tokens) {
  return std::max<int64_t>(1, lab.context_limit() - max_tokens - kContextMargin);
}

std::string limit_reason(const LabContext& lab) {
  if (lab.context_limit() < lab.facts().context_length)
    return fmt::format("--max-context caps the context at {} tokens", lab.context_limit());
  return fmt::format("the model's context is {} tokens", lab.facts().context_length);
}

int64_t server_context(const LabContext& lab, int64_t prompt, int64_t max_tokens) {
  return std::min(lab.context_limit(), prompt + max_tokens + kContextMargin);
}

bench::BenchRequest lab_request(const LabContext& lab, int64_t prompt, int64_t max_tokens, uint64_t seed) {
  return bench::bench_request(lab.facts().model, static_cast<int>(prompt), static_cast<int>(max_tokens), seed);
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  return bench::spread(std::move(values))->median;
}

double client_ttft_ms(const bench::StreamRecord& record) {
  return bench::client_figures(record).ttft_ms.value_or(0);
}

double engine_ttft_ms(const bench::StreamRecord& record) {
  if (record.engine && record.engine->ttft_ms) return *record.engine->ttft_ms;
  return client_ttft_ms(record);
}

double decode_tok_s(const bench::StreamRecord& record) {
  if (record.engine && record.engine->decode_tok_s) return *record.engine->decode_tok_s;
  return bench::client_figures(record).decode_tok_s.value_or(0);
}

const bench::EngineClock& engine_clock(const bench::StreamRecord& record, const std::string& what) {
  if (!record.engine)
    throw std::runtime_error("the server reported no engine clock, which " + what +
                             " needs (nanoserve's final chunk carries it)");
  return *record.engine;
}

}  // namespace nanoserve::lab
