// Carries one request's engine stream to its client: each piece of text to `send_text` as
// it arrives, with the logprobs of the tokens it came from (those of tokens held back
// travel with the next piece; those of tokens never sent, a stop string's, are dropped), timing pieces for the metrics. When the client goes (a send fails or
// `client_connected` turns false while the engine is between pieces), the stream is
// cancelled, so the engine drops the request at its next step.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/metrics.h"
#include "server/request_log.h"

namespace nanoserve::server {

struct RelayEnd {
  enum class Kind { Done, Failed, ClientGone };
  Kind kind = Kind::Done;
  engine::FinishReason finish = engine::FinishReason::Stop;  // Done
  engine::RequestStats stats;                                // Done
  std::string error;                                         // Failed: the engine's message
};

RelayEnd relay_generation(engine::Stream& stream, Clock::time_point received,
                          const std::function<bool(const std::string&, std::vector<engine::TokenLogprobs>)>& send_text,
                          const std::function<bool()>& client_connected, ServerMetrics& metrics);

}  // namespace nanoserve::server
