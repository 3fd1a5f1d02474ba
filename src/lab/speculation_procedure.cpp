// speculation: a model continuing source code (a file of the standard library by default),
// greedy, with --spec lookup and with --spec off: tokens per read of the weights, decode rates.

#include "bench/python_code.h"
#include "engine/prompt_lookup.h"
#include "gguf/file.h"
#include "lab/procedure_helpers.h"
#include "lab/procedures.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::lab {
namespace {

// Up to `tokens` tokens of the file's code (bench/python_code.h).
std::vector<int32_t> source_prompt(const std::string& model_path, const std::string& path, int64_t tokens) {
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_gguf(gguf::File::open(model_path).metadata());
  std::vector<int32_t> ids = tok.encode(bench::python_code(path), false);
  if (ids.empty()) throw std::runtime_error(path + " has no text");
  if (static_cast<int64_t>(ids.size()) > tokens) ids.resize(static_cast<size_t>(tokens));
  return ids;
}

// Of the prompt's tokens after the first, those prompt lookup would have proposed as the next
// one from the tokens before it.
double lookup_hit_rate(const std::vector<int32_t>& ids) {
  if (ids.size() < 2) return 0;
  int64_t hits = 0;
  for (size_t i = 1; i < ids.size(); ++i) {
    const std::vector<int32_t> guess = engine::PromptLookup::lookup(std::span(ids.data(), i), 1);
    hits += !guess.empty() && guess.front() == ids[i] ? 1 : 0;
  }
  return static_cast<double>(hits) / static_cast<double>(ids.size() - 1);
}

class Speculation final : public Procedure {
 public:
  Speculation(LabContext& lab, const nlohmann::json& p)
      : max_tokens_(std::min<int64_t>(parameter_int(p, "max_tokens"), lab.context_limit() / 2)) {
    const int64_t wanted = parameter_int(p, "prompt_tokens");
    prompt_ = source_prompt(lab.facts().model.path, p.at("source").get<std::string>(),
                            std::min(wanted, prompt_limit(lab, max_tokens_)));
    if (static_cast<int64_t>(prompt_.size()) < wanted)
      notes_.push_back("the prompt has " + std::to_string(prompt_.size()) + " tokens, not " + std::to_string(wanted) +
                       " (" + limit_reason(lab) + ", or the file is shorter)");
    hit_rate_ = lookup_hit_rate(prompt_);
  }

  std::map<std::string, double> known() const override {
    return {{"prompt_tokens", prompt_.size()}, {"max_tokens", max_tokens_}, {"lookup_hit_rate", hit_rate_}};
  }

  Measurement measure(LabContext& lab) override {
    Measurement m;
    const int64_t context = server_context(lab, static_cast<int64_t>(prompt_.size()), max_tokens_);
    if (lab.servers().external()) {
      m.points.push_back(continue_on(lab, lab.servers().get({}), "the server at --url", 1));
      m.notes.push_back("with --url only that server is measured, with its own --spec (nanoserve: lookup by default)");
      return m;
    }
    m.points.push_back(continue_on(lab, lab.servers().get({.context = context, .spec = "lookup"}), "--spec lookup", 1));
    m.points.push_back(continue_on(lab, lab.servers().get({.context = context, .spec = "off"}), "--spec off", 0));
    const double off_rate = m.points[1].details.value("decode_tok_s", 0.0);
    if (off_rate > 0) m.details["decode_speedup"] = m.points[0].details.value("decode_tok_s", 0.0) / off_rate;
    return m;
  }

 private:
  Point continue_on(LabContext& lab, LabServer& server, const std::string& label, int drafting) {
    server.complete(lab_request(lab, 16, 8, 8000));  // warm-up
    bench::BenchRequest request{.prompt = prompt_, .max_tokens = static_cast<int>(max_tokens_),
                                .banned = lab.facts().model.silent_tokens};
    const bench::StreamRecord r = server.complete(request);
    const bench::EngineClock& clock = engine_clock(r, "tokens per read");
    const int64_t tokens = r.completion_tokens.value_or(static_cast<int64_t>(r.chunk_us.size()));
    const int64_t steps = clock.decode_steps.value_or(0);
    if (steps <= 0) throw std::runtime_error("the server reported no decode_steps");
    Point point{.label = label, .variables = {{"drafting", drafting}},
                .measured = static_cast<double>(tokens) / static_cast<double>(steps)};
    point.details["completion_tokens"] = tokens;
    point.details["decode_steps"] = steps;
    point.details["draft_tokens"] = clock.draft_tokens.value_or(0);
    point.details["accepted_tokens"] = clock.accepted_tokens.value_or(0);
    point.details["decode_tok_s"] = decode_tok_s(r);
    return point;
  }

  int64_t max_tokens_;
  std::vector<int32_t> prompt_;
  double hit_rate_ = 0;
};

}  // namespace

std::unique_ptr<Procedure> make_speculation(LabContext& lab, const nlohmann::json& p) {
  return std::make_unique<Speculation>(lab, p);
}

}  // namespace nanoserve::lab
