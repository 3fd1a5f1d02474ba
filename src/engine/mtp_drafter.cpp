#include "engine/mtp_drafter.h"

#include <algorithm>
#include <stdexcept>

namespace nanoserve::engine {

MtpDrafter::MtpDrafter(model::Model& target, model::KvCache& pool)
    : target_(target),
      pool_(pool),
      n_embd_(target.config().n_embd),
      last_(static_cast<size_t>(pool.n_seq() * n_embd_)),
      last_pos_(static_cast<size_t>(pool.n_seq()), -1) {
  if (!target.config().mtp) throw std::invalid_argument("the model runs no multi-token-prediction block");
}

int64_t MtpDrafter::available(std::span<const int32_t> tokens, int64_t max) const {
  return tokens.size() < 2 ? 0 : std::min<int64_t>(max, 1);
}

PromptIntake MtpDrafter::propose(std::span<const DraftAsk> asks) {
  // The block's output at the position before the last token guesses the token after it.
  rows_.clear();
  std::vector<const DraftAsk*> asked;
  for (const DraftAsk& ask : asks) {
    ask.out->clear();
    const auto slot = static_cast<size_t>(ask.slot);
    if (ask.max < 1 || last_pos_[slot] != static_cast<int64_t>(ask.tokens.size()) - 2) continue;
    rows_.insert(rows_.end(), last_.begin() + static_cast<std::ptrdiff_t>(slot * n_embd_),
                 last_.begin() + static_cast<std::ptrdiff_t>((slot + 1) * n_embd_));
    asked.push_back(&ask);
  }
  if (asked.empty()) return {};
  target_.mtp_logits(rows_, logits_);
  for (size_t i = 0; i < asked.size(); ++i) {
    const std::span<const float> row = logits_.row(i);
    asked[i]->out->push_back(static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin()));
  }
  return {};
}

void MtpDrafter::follow(std::span<const StepKept> kept, const model::Logits& step) {
  batch_.clear();
  hidden_.clear();
  std::vector<const StepKept*> ran;
  for (const StepKept& k : kept) {
    if (k.to <= k.from) continue;
    if (k.to >= static_cast<int64_t>(k.tokens.size()))
      throw std::logic_error("MTP drafter: a kept position without the token after it");
    for (int64_t p = k.from; p < k.to; ++p) {
      batch_.add(k.slot, p, k.tokens[static_cast<size_t>(p + 1)], p + 1 == k.to);
      const size_t row = k.first_row + static_cast<size_t>(p - k.from);
      hidden_.insert(hidden_.end(), step.hidden.begin() + static_cast<std::ptrdiff_t>(row * n_embd_),
                     step.hidden.begin() + static_cast<std::ptrdiff_t>((row + 1) * n_embd_));
    }
    ran.push_back(&k);
  }
  if (ran.empty()) return;
  target_.forward_mtp(batch_, hidden_, pool_, out_);
  for (size_t i = 0; i < ran.size(); ++i) {
    const auto slot = static_cast<size_t>(ran[i]->slot);
    std::copy_n(out_.begin() + static_cast<std::ptrdiff_t>(i * n_embd_), n_embd_,
                last_.begin() + static_cast<std::ptrdiff_t>(slot * n_embd_));
    last_pos_[slot] = ran[i]->to - 1;
  }
}

void MtpDrafter::forget(int slot) { last_pos_.at(static_cast<size_t>(slot)) = -1; }

}  // namespace nanoserve::engine
