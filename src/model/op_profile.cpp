#include "model/op_profile.h"

namespace nanoserve::model {

const char* op_name(Op op) {
  switch (op) {
    case Op::kEmbed: return "embed";
    case Op::kNorm: return "norms";
    case Op::kQkv: return "q, k, v";
    case Op::kRopeKv: return "rope, kv store";
    case Op::kAttention: return "attention";
    case Op::kWo: return "wo";
    case Op::kRouter: return "router";
    case Op::kGateUp: return "gate, up";
    case Op::kSiluMul: return "silu * up";
    case Op::kDown: return "down";
    case Op::kOutput: return "output";
    case Op::kDeltaNet: return "delta net";
  }
  return "?";
}

void OpClock::start(OpProfile* profile) {
  profile_ = profile;
  if (!profile_) return;
  ++profile_->forwards;
  last_ = std::chrono::steady_clock::now();
}

void OpClock::charge(Op op, double bytes) {
  const auto now = std::chrono::steady_clock::now();
  profile_->seconds_of(op) += std::chrono::duration<double>(now - last_).count();
  profile_->bytes_of(op) += bytes;
  last_ = now;
}

}  // namespace nanoserve::model
