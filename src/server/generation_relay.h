// Carries a request's engine streams to its client: each piece of text to `send_text` as
// it arrives (and on the request's timeline, when its engine keeps one: engine/timeline.h),
// with the logprobs of the tokens it came from (those of tokens held back travel with the next
// piece; those of tokens never sent, a stop string's, are dropped), timing pieces for the
// metrics. When the client goes (a send fails or `client_connected` turns false while the
// engine is between pieces), the streams are cancelled, so the engine drops the request at its
// next step.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/metrics.h"
#include "server/request_log.h"
#include "server/server_state.h"

namespace nanoserve::server {

struct RelayEnd {
  enum class Kind { Done, Failed, ClientGone };
  Kind kind = Kind::Done;
  engine::FinishReason finish = engine::FinishReason::Stop;  // Done
  std::string stop;                                          // Done: the stop string that ended it, if one did
  engine::RequestStats stats;                                // Done
  std::string error;                                         // Failed: the engine's message
};

// A piece of choice `choice`'s text and its tokens' logprobs; false: the client is gone.
using SendText = std::function<bool(size_t choice, const std::string& text, std::vector<engine::TokenLogprobs>)>;

// Carries the streams of one request's choices (n > 1: one per choice) together, a piece as
// each arrives; `on_end` hears each choice's end as it comes (Done or Failed). Returns every
// choice's end: all ClientGone, every stream cancelled, when the client went. Once the server's
// drain is over (ServerState::cut_generations), the choices still open end Failed, cancelled.
std::vector<RelayEnd> relay_generations(std::span<engine::Stream* const> streams, Clock::time_point received,
                                        const SendText& send_text, const std::function<void(size_t, const RelayEnd&)>& on_end,
                                        const std::function<bool()>& client_connected, ServerState& state);

}  // namespace nanoserve::server
