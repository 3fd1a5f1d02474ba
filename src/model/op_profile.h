// Where the forward pass's time goes, op by op: wall time on the calling thread (from the end
// of the op before, so that the ops' times add up to the forward calls') and the bytes each op
// reads from the weights and the KV cache, summed over the forward calls a profile is
// attached for (Model::set_profile). `nanoserve bench-engine --profile` prints it per decode
// step, beside each op's bytes per second: how close every part of a step comes to the
// machine's memory bandwidth.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace nanoserve::model {

enum class Op {
  kEmbed,      // embedding rows and RoPE angles
  kNorm,       // the RMS norms before attention, before the feed-forward block and before the output
  kQkv,        // Wq, Wk, Wv
  kRopeKv,     // biases, Q/K norms, RoPE, keys and values into the cache
  kAttention,  // scores, softmax and the weighted values over the cache
  kWo,         // Wo and the residual add
  kRouter,     // a mixture of experts' router and the choice of experts (none in dense models)
  kGateUp,     // Wgate, Wup
  kSiluMul,    // silu(gate) * up
  kDown,       // Wdown and the residual add
  kOutput,     // the output matrix (logits)
  kDeltaNet,   // a delta-net layer's convolution, state update, norm and gate (none elsewhere)
};
inline constexpr int kOpCount = 12;

const char* op_name(Op op);

struct OpProfile {
  std::array<double, kOpCount> seconds{};
  std::array<double, kOpCount> bytes{};
  int64_t forwards = 0;  // forward calls added in

  double& seconds_of(Op op) { return seconds[static_cast<int>(op)]; }
  double& bytes_of(Op op) { return bytes[static_cast<int>(op)]; }
};

// Stamps the op boundaries of one forward call. Each op of the forward pass opens a scope,
//   const auto timed = clock_.time(Op::kQkv, bytes_read);
// whose end charges the time since the op before (or start()) to it, so that the ops' times
// add up to the forward call's. Does nothing while no profile is attached.
class OpClock {
 public:
  class [[nodiscard]] Scope {
   public:
    Scope(OpClock& clock, Op op, double bytes) : clock_(clock), op_(op), bytes_(bytes) {}
    ~Scope() {
      if (clock_.profile_) clock_.charge(op_, bytes_);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    OpClock& clock_;
    const Op op_;
    const double bytes_;
  };

  void start(OpProfile* profile);
  Scope time(Op op, double bytes = 0.0) { return Scope(*this, op, bytes); }

 private:
  void charge(Op op, double bytes);

  OpProfile* profile_ = nullptr;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace nanoserve::model
