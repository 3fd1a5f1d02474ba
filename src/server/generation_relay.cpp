#include "server/generation_relay.h"

#include <optional>
#include <utility>

namespace nanoserve::server {
namespace {

// How long to wait for the engine before checking that the client is still there.
constexpr std::chrono::milliseconds kConnectionCheckInterval{10};

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

RelayEnd relay_generation(engine::Stream& stream, Clock::time_point received,
                          const std::function<bool(const std::string&, std::vector<engine::TokenLogprobs>)>& send_text,
                          const std::function<bool()>& client_connected, ServerMetrics& metrics) {
  auto client_gone = [&] {
    stream.cancel();
    metrics.count_cancellation();
    return RelayEnd{.kind = RelayEnd::Kind::ClientGone, .finish = {}, .stats = {}, .error = {}};
  };
  std::optional<Clock::time_point> last_sent;
  std::vector<engine::TokenLogprobs> logprobs;  // of tokens whose text has not been sent yet
  for (;;) {
    std::optional<engine::Event> event = stream.next(kConnectionCheckInterval);
    if (!event) {
      if (!client_connected()) return client_gone();
      continue;
    }
    switch (event->kind) {
      case engine::Event::Kind::Text: {
        for (engine::TokenLogprobs& t : event->logprobs) logprobs.push_back(std::move(t));
        if (event->text.empty()) break;  // held back (a possible stop string, a partial character)
        const Clock::time_point now = Clock::now();
        if (last_sent) {
          metrics.observe_inter_token_latency(seconds_between(*last_sent, now));
        } else {
          metrics.observe_time_to_first_token(seconds_between(received, now));
        }
        last_sent = now;
        if (!send_text(event->text, std::exchange(logprobs, {}))) return client_gone();
        break;
      }
      case engine::Event::Kind::Done:
        metrics.count_tokens(event->stats.prompt_tokens, event->stats.completion_tokens);
        return RelayEnd{.kind = RelayEnd::Kind::Done, .finish = event->finish, .stats = event->stats, .error = {}};
      case engine::Event::Kind::Error:
        return RelayEnd{.kind = RelayEnd::Kind::Failed, .finish = {}, .stats = {}, .error = event->error};
    }
  }
}

}  // namespace nanoserve::server
