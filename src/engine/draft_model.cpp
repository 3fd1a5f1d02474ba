#include "engine/draft_model.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <string>

#include "engine/defaults.h"

namespace nanoserve::engine {
namespace {

constexpr const char* kTokensKey = "tokenizer.ggml.tokens";

int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// Positions rounded up to whole blocks: the pool then holds every slot's whole context at once.
int64_t whole_blocks(int64_t positions) {
  const int64_t block = model::KvCache::kDefaultBlockSize;
  return (positions + block - 1) / block * block;
}

}  // namespace

void check_same_vocabulary(const gguf::File& target, const gguf::File& draft) {
  const std::vector<std::string> a = target.metadata().get_strings(kTokensKey);
  const std::vector<std::string> b = draft.metadata().get_strings(kTokensKey);
  if (a.size() != b.size())
    throw std::invalid_argument("the draft model's vocabulary has " + std::to_string(b.size()) +
                                " tokens, the model's " + std::to_string(a.size()) +
                                ": a draft model must share the model's vocabulary");
  const auto diff = std::mismatch(a.begin(), a.end(), b.begin());
  if (diff.first != a.end())
    throw std::invalid_argument("the draft model's token " + std::to_string(diff.first - a.begin()) + " is \"" +
                                *diff.second + "\", the model's \"" + *diff.first +
                                "\": a draft model must share the model's vocabulary");
}

DraftModel::DraftModel(const DraftModelOptions& options, model::Model& target)
    : model_(options.path, {.pool = &target.pool(), .kv_type = target.config().kv_type}),
      cache_(model_.config(), options.n_seq * whole_blocks(options.context_size + options.draft_max), options.n_seq),
      context_size_(model_.set_context(options.context_size + options.draft_max)),
      fed_(static_cast<size_t>(options.n_seq)) {
  check_same_vocabulary(target.file(), model_.file());
  if (model_.config().n_vocab != target.config().n_vocab)
    throw std::invalid_argument("the draft model's output has " + std::to_string(model_.config().n_vocab) +
                                " logits, the model's " + std::to_string(target.config().n_vocab));
}

int64_t DraftModel::available(std::span<const int32_t> tokens, int64_t max) const {
  return std::max<int64_t>(0, std::min(max, context_size_ - static_cast<int64_t>(tokens.size())));
}

size_t DraftModel::kept(int slot, std::span<const int32_t> tokens) const {
  const std::vector<int32_t>& fed = fed_[static_cast<size_t>(slot)];
  const size_t limit = std::min(fed.size(), tokens.empty() ? 0 : tokens.size() - 1);
  const auto same = static_cast<size_t>(
      std::mismatch(fed.begin(), fed.begin() + static_cast<std::ptrdiff_t>(limit), tokens.begin()).first - fed.begin());
  // A draft model with sliding-window layers has let go of the windows of earlier positions:
  // from one of those it starts over.
  return cache_.can_truncate(slot, static_cast<int64_t>(same)) ? same : 0;
}

int64_t DraftModel::intake(int slot, std::span<const int32_t> tokens) const {
  return tokens.empty() ? 0 : static_cast<int64_t>(tokens.size() - 1 - kept(slot, tokens));
}

PromptIntake DraftModel::propose(std::span<const DraftAsk> asks) {
  for (const DraftAsk& ask : asks) ask.out->clear();
  if (asks.empty()) return {};
  const PromptIntake prompts = catch_up(asks);
  // logits_ holds a row per ask, in order: each round drafts a token per ask from its row, then
  // feeds the tokens of those that want more.
  std::vector<size_t> active(asks.size());
  for (size_t i = 0; i < asks.size(); ++i) active[i] = i;
  while (!active.empty()) {
    std::vector<size_t> more;
    batch_.clear();
    for (size_t r = 0; r < active.size(); ++r) {
      const DraftAsk& ask = asks[active[r]];
      const int32_t token = argmax(logits_.row(r));
      ask.out->push_back(token);
      if (static_cast<int64_t>(ask.out->size()) >= ask.max) continue;
      feed(ask.slot, token, true);
      more.push_back(active[r]);
    }
    if (!more.empty()) forward();
    active = std::move(more);
  }
  return prompts;
}

PromptIntake DraftModel::catch_up(std::span<const DraftAsk> asks) {
  // What each slot's cache keeps: the longest prefix of its tokens the sequence begins with,
  // short of the last token (whose logits are wanted).
  size_t missing = 0;
  for (const DraftAsk& ask : asks) {
    const size_t keep = kept(ask.slot, ask.tokens);
    cache_.truncate(ask.slot, static_cast<int64_t>(keep));
    fed_[static_cast<size_t>(ask.slot)].resize(keep);
    missing += ask.tokens.size() - 1 - keep;
  }
  // Into a new batch: each ask's missing tokens but its last, `rows` in all at most.
  auto feed_missing = [&](size_t rows) {
    batch_.clear();
    for (const DraftAsk& ask : asks)
      for (size_t at = fed_[static_cast<size_t>(ask.slot)].size(); at + 1 < ask.tokens.size() && batch_.size() < rows;
           ++at)
        feed(ask.slot, ask.tokens[at], false);
  };
  // A prompt's worth goes first, in passes of at most kDefaultStepTokens rows (timed apart);
  // a few tokens (what the model chose last step) join the pass of the last tokens.
  const auto started = std::chrono::steady_clock::now();
  PromptIntake prompts;
  constexpr auto kPromptPass = static_cast<size_t>(kDefaultStepTokens);
  if (missing > kPromptRows) {
    for (feed_missing(kPromptPass); batch_.size() > 0; feed_missing(kPromptPass)) forward();
    prompts = {.tokens = static_cast<int64_t>(missing),
               .seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()};
  }
  // The rest, then the last tokens in ask order, so that logits_ has a row per ask (rows of
  // different sequences may interleave).
  feed_missing(std::numeric_limits<size_t>::max());
  for (const DraftAsk& ask : asks) feed(ask.slot, ask.tokens.back(), true);
  forward();
  return prompts;
}

void DraftModel::feed(int slot, int32_t token, bool logits) {
  std::vector<int32_t>& fed = fed_[static_cast<size_t>(slot)];
  batch_.add(slot, static_cast<int64_t>(fed.size()), token, logits);
  fed.push_back(token);
}

void DraftModel::forward() { model_.forward(batch_, cache_, logits_); }

}  // namespace nanoserve::engine
