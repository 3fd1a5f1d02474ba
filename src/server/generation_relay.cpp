#include "server/generation_relay.h"

#include <algorithm>
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

std::vector<RelayEnd> relay_generations(std::span<engine::Stream* const> streams, Clock::time_point received,
                                        const SendText& send_text, const std::function<void(size_t, const RelayEnd&)>& on_end,
                                        const std::function<bool()>& client_connected, ServerState& state) {
  ServerMetrics& metrics = state.metrics();
  const size_t n = streams.size();
  std::vector<RelayEnd> ends(n);
  std::vector<bool> ended(n, false);
  std::vector<std::optional<Clock::time_point>> last_sent(n);
  std::vector<std::vector<engine::TokenLogprobs>> logprobs(n);  // of tokens whose text has not been sent yet
  auto client_gone = [&] {
    for (engine::Stream* s : streams) s->cancel();
    metrics.count_cancellation();
    for (RelayEnd& e : ends)
      e = RelayEnd{.kind = RelayEnd::Kind::ClientGone, .finish = {}, .stop = {}, .stats = {}, .error = {}};
    return ends;
  };
  // Each stream waits its share of the interval, so the client is checked as often as with one.
  const auto wait = std::max(std::chrono::milliseconds(1), kConnectionCheckInterval / static_cast<int>(n));
  for (size_t open = n; open > 0;) {
    if (state.generations_cut()) {
      for (size_t c = 0; c < n; ++c) {
        if (ended[c]) continue;
        streams[c]->cancel();
        ends[c] = RelayEnd{.kind = RelayEnd::Kind::Failed, .finish = {}, .stop = {}, .stats = {},
                           .error = "the server is shutting down: this generation was stopped"};
        ended[c] = true;
        on_end(c, ends[c]);
      }
      return ends;
    }
    bool any_event = false;
    for (size_t c = 0; c < n; ++c) {
      if (ended[c]) continue;
      std::optional<engine::Event> event = streams[c]->next(wait);
      if (!event) continue;
      any_event = true;
      switch (event->kind) {
        case engine::Event::Kind::Text: {
          for (engine::TokenLogprobs& t : event->logprobs) logprobs[c].push_back(std::move(t));
          if (event->text.empty()) break;  // held back (a possible stop string, a partial character)
          const Clock::time_point now = Clock::now();
          if (last_sent[c]) {
            metrics.observe_inter_token_latency(seconds_between(*last_sent[c], now));
          } else {
            metrics.observe_time_to_first_token(seconds_between(received, now));
          }
          last_sent[c] = now;
          if (!send_text(c, event->text, std::exchange(logprobs[c], {}))) return client_gone();
          if (const auto timeline = streams[c]->timeline())
            timeline->add_write(now, Clock::now(), static_cast<int64_t>(event->text.size()));
          break;
        }
        case engine::Event::Kind::Done:
          metrics.count_tokens(event->stats.prompt_tokens, event->stats.completion_tokens);
          ends[c] = RelayEnd{.kind = RelayEnd::Kind::Done, .finish = event->finish, .stop = event->stop,
                             .stats = event->stats, .error = {}};
          break;
        case engine::Event::Kind::Error:
          ends[c] =
              RelayEnd{.kind = RelayEnd::Kind::Failed, .finish = {}, .stop = {}, .stats = {}, .error = event->error};
          break;
      }
      if (event->kind != engine::Event::Kind::Text) {
        ended[c] = true;
        --open;
        on_end(c, ends[c]);
      }
    }
    if (!any_event && !client_connected()) return client_gone();
  }
  return ends;
}

}  // namespace nanoserve::server
