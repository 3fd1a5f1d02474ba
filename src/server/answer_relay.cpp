#include "server/answer_relay.h"

#include <memory>
#include <span>
#include <utility>

#include "server/request_log.h"

namespace nanoserve::server {

RelayEnd relay_answer(ServerState& state, std::shared_ptr<engine::Stream> stream, ChatReaders readers,
                      const std::function<bool(AnswerPieces)>& on_pieces,
                      const std::function<bool()>& client_connected) {
  struct CancelOnExit {
    std::shared_ptr<engine::Stream> stream;
    ~CancelOnExit() { stream->cancel(); }
  } owned{std::move(stream)};
  engine::Stream* streams[] = {owned.stream.get()};
  RequestLogRecord& log = this_thread_request_log();
  auto deliver = [&](AnswerPieces pieces) { return pieces.empty() || on_pieces(std::move(pieces)); };
  bool gone = false;
  RelayEnd end = relay_generations(
      std::span<engine::Stream* const>(streams), log.received,
      [&](size_t, const std::string& text, std::vector<engine::TokenLogprobs>) {
        return deliver(read_piece(readers, text, false));
      },
      [&](size_t, const RelayEnd& e) {
        if (e.kind == RelayEnd::Kind::Done) gone = !deliver(read_piece(readers, "", true));
      },
      client_connected, state)[0];
  if (gone) {
    end = RelayEnd{.kind = RelayEnd::Kind::ClientGone, .finish = {}, .stop = {}, .stats = {}, .error = {}};
    state.metrics().count_cancellation();
  }
  if (end.kind == RelayEnd::Kind::ClientGone) log.cancelled = true;
  if (end.kind == RelayEnd::Kind::Done) log.stats = end.stats;
  return end;
}

}  // namespace nanoserve::server
