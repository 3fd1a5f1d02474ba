// The Engine interface: what the server asks of any engine (mock, sequential, batch).
//
// submit() takes a tokenized request and returns its Stream at once; the engine generates on
// its own thread(s) and pushes events into the stream: text pieces (UTF-8 safe, stop strings
// already cut), then exactly one final event (Done with usage and stats, or Error). The
// server reads the stream from its connection thread; Stream::cancel() (the reader has gone)
// makes the engine stop spending time on the request within one step.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/sampler.h"
#include "engine/timeline.h"
#include "grammar/grammar.h"
#include "grammar/vocabulary.h"
#include "engine/kv_disk_cache.h"

namespace nanoserve::tokenizer {
class Tokenizer;
}

namespace nanoserve::engine {

struct GenerationRequest {
  std::string id;                   // the server's request id (for logs and cancel)
  std::vector<int32_t> prompt;      // token ids, already templated and tokenized
  SamplingParams sampling;
  std::map<int32_t, float> logit_bias;  // added to a token's logit before sampling
  int32_t max_tokens = 16;          // new tokens at most (the server has checked it against the context)
  std::vector<std::string> stop;    // generation ends before any of these; they are never emitted
  bool ignore_eos = false;          // keep going past end-of-generation tokens
  bool cache_prompt = true;         // use the prefix cache: start from cached blocks, publish its own
  bool speculative = true;          // let the engine's drafter propose tokens for it (when the engine has one)
  // Output held to a grammar (response_format): only tokens it allows are sampled, end tokens
  // only where it can end. Null: free text. The vocabulary is the engine tokenizer's
  // (grammar_vocabulary.h), built once and shared.
  std::shared_ptr<const grammar::Grammar> grammar;
  std::shared_ptr<const grammar::Vocabulary> grammar_vocabulary;
  // Report each generated token's log-probability, and that of the `top_logprobs` most likely
  // tokens at its step (token_logprobs.h says of which distribution).
  bool logprobs = false;
  int32_t top_logprobs = 0;
};

// A token and its log-probability.
struct TokenProbability {
  std::string bytes;  // the token's bytes (part of a UTF-8 character, at times)
  float logprob = 0.0f;
};
// A generated token's log-probability, and the most likely tokens at its step, best first.
struct TokenLogprobs {
  TokenProbability chosen;
  std::vector<TokenProbability> top;
};

enum class FinishReason { Stop, Length, Cancelled };
// "stop", "length" or "cancelled": the OpenAI API's finish_reason, also in logs and rows.
const char* finish_reason_name(FinishReason reason);

// The engine's own clock for one request (the server reports it as the `nanoserve` object).
struct RequestStats {
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  int32_t cached_tokens = 0;  // prompt tokens whose keys and values came from the prefix cache
  double queue_ms = 0;       // submitted -> admitted
  double ttft_ms = 0;        // submitted -> first token (includes the queue)
  double prefill_tok_s = 0;  // prompt tokens computed (not cached) / (admitted -> first token)
  double decode_tok_s = 0;   // (completion tokens - 1) / (first token -> last token)
  int64_t peak_memory_bytes = 0;  // the process's peak RSS when the request ended
  int64_t kv_blocks = 0;          // the most KV cache blocks the request held at once (0: no paged cache)
  int64_t kv_peak_bytes = 0;      // those blocks' bytes
  // Forward steps that gave the request new tokens (each reads the weights once): the first
  // token's (none when the prefix cache held every prompt position and the logits after them:
  // cached_tokens == prompt_tokens), then one per decode or verify step. completion_tokens /
  // decode_steps is the request's tokens per read of the weights (1 without speculative
  // decoding and such a hit).
  int64_t decode_steps = 0;
  int64_t verify_steps = 0;     // of those, steps that checked draft tokens
  int64_t draft_tokens = 0;     // draft tokens checked
  int64_t accepted_tokens = 0;  // of those, the ones the model agreed with (each a token without a step of its own)
  // By position in a draft (0 = its first token): drafts that reached the position, and those
  // whose token there was accepted (with every one before it). Empty without drafts.
  std::vector<int64_t> drafted_at, accepted_at;

  // Tokens per read of the weights (0 before any step).
  double tokens_per_step() const {
    return decode_steps > 0 ? static_cast<double>(completion_tokens) / static_cast<double>(decode_steps) : 0.0;
  }
  // A verify step gives its accepted drafts and one token of the model's own (0 without any).
  double tokens_per_verify_step() const {
    return verify_steps > 0 ? static_cast<double>(accepted_tokens + verify_steps) / static_cast<double>(verify_steps)
                            : 0.0;
  }
};

struct Event {
  enum class Kind { Text, Done, Error };
  Kind kind = Kind::Text;
  std::string text;                 // Text: the new piece (may be empty when held back)
  std::vector<int32_t> tokens;      // Text: the token ids the piece came from
  std::vector<TokenLogprobs> logprobs;  // Text: one per text token of `tokens`, when the request asked
  FinishReason finish = FinishReason::Stop;  // Done
  std::string stop;                 // Done: the stop string that ended it (empty: none did)
  RequestStats stats;               // Done
  std::string error;                // Error: what went wrong (the server answers 500)
};

// One request's events, produced by the engine and consumed by one reader.
class Stream {
 public:
  // Engine side.
  void push(Event event);
  bool cancelled() const;

  // Reader side: waits up to `timeout` for the next event; nullopt on timeout.
  std::optional<Event> next(std::chrono::milliseconds timeout);
  // Waits up to `timeout` for an event without taking it: whether one is there.
  bool wait_for_event(std::chrono::milliseconds timeout);
  // The reader has gone (client disconnected): the engine drops the request at its next step.
  void cancel();

  // The request's timeline, when its engine records one (engine_trace.h): the engine sets it
  // before its first event, and the server adds its writes to it.
  void set_timeline(std::shared_ptr<RequestTimeline> timeline);
  std::shared_ptr<RequestTimeline> timeline() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<RequestTimeline> timeline_;
  std::condition_variable ready_;
  std::deque<Event> events_;
  bool cancelled_ = false;
};

// Thrown by submit() when the engine's queue is full: the server answers 429 at once.
struct QueueFull : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A histogram of whole numbers: counts[i] values <= bounds[i] (and > bounds[i-1]); the last
// count is for values above every bound. Not cumulative.
struct CountHistogram {
  std::vector<int64_t> bounds;
  std::vector<uint64_t> counts;  // bounds.size() + 1
  int64_t sum = 0;
};

// Counters for /metrics, read at any time.
struct EngineMetrics {
  int64_t waiting = 0;             // queued, not yet admitted (or preempted, waiting to resume)
  int64_t running = 0;             // admitted, generating
  int64_t kv_used_bytes = 0;
  int64_t kv_total_bytes = 0;
  // Paged KV cache (batch engine; 0 elsewhere).
  int64_t kv_used_blocks = 0;
  int64_t kv_total_blocks = 0;
  uint64_t preemptions = 0;        // sequences that gave their blocks back to be recomputed later
  // The prefix cache (batch engine with --prefix-cache on; 0 elsewhere).
  int64_t kv_cached_blocks = 0;    // published blocks no sequence holds, kept until their space is needed
  uint64_t prefix_lookups = 0;     // admissions that looked their tokens up
  uint64_t prefix_hit_tokens = 0;  // positions they found cached
  uint64_t prefix_miss_tokens = 0; // positions they had to compute
  uint64_t prefix_evictions = 0;   // cached blocks given to new positions
  uint64_t prefix_logits_hits = 0; // admissions that found every position and the logits after them:
                                   // their first token took no step
  KvDiskStats prefix_disk;          // the disk tier (--cache-dir; zeros without one)
  CountHistogram batch_sequences;  // per forward step: the sequences it advanced (empty: no batching)
  // Speculative decoding (batch engine with --spec lookup or draft; 0 elsewhere).
  uint64_t decode_steps = 0;       // per request, forward steps that gave it new tokens (summed)
  uint64_t generated_tokens = 0;   // the tokens those steps gave
  uint64_t verify_steps = 0;       // of the steps, those that checked draft tokens
  uint64_t draft_tokens = 0;       // draft tokens checked
  uint64_t accepted_tokens = 0;    // of those, accepted
};

// What a server reports of its model besides its name (Ollama's /api/tags and /api/show).
struct ModelFacts {
  std::string architecture;  // general.architecture: "llama", "qwen3", ...
  uint64_t parameters = 0;   // the elements of every tensor
  std::string file_type;     // general.file_type by name ("Q8_0", "Q4_K_M"); "" when the file does not say
  uint64_t file_bytes = 0;
  std::string kv_type;       // how the KV cache stores keys and values ("f16", "q8_0"); "" without one (mock)
};

class EngineTrace;

class Engine {
 public:
  virtual ~Engine() = default;

  // Queues the request; throws QueueFull when the queue is at its limit.
  virtual std::shared_ptr<Stream> submit(GenerationRequest request) = 0;
  virtual EngineMetrics metrics() const = 0;

  virtual const tokenizer::Tokenizer& tokenizer() const = 0;
  virtual std::string model_name() const = 0;  // as /v1/models lists it
  virtual int64_t context_size() const = 0;    // prompt + max_tokens must fit
  virtual std::string chat_template() const = 0;  // Jinja source from the GGUF; empty if none
  virtual ModelFacts model_facts() const = 0;
  // Its requests' timelines and live snapshots of its state (the lab's pages); nullptr when
  // the engine records none.
  virtual EngineTrace* trace() { return nullptr; }
};

}  // namespace nanoserve::engine
