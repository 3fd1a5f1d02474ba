// One chat answer carried to a client by an API that writes its own format (Anthropic's
// messages, the Responses API, Ollama's): each piece of the submitted request's output is read
// (reasoning, content, tool calls) and handed over as it arrives, the readers' last words at
// the end. However it returns, the stream is cancelled, so nothing keeps generating for
// nobody; the request log gets the stats, or that the client went.
#pragma once

#include <functional>
#include <memory>

#include "engine/engine.h"
#include "server/chat_readers.h"
#include "server/generation_relay.h"
#include "server/server_state.h"

namespace nanoserve::server {

// `stream` is what engine().submit() returned. `on_pieces` gets every non-empty piece; false
// from it or from `client_connected`: the client is gone (the end is ClientGone).
RelayEnd relay_answer(ServerState& state, std::shared_ptr<engine::Stream> stream, ChatReaders readers,
                      const std::function<bool(AnswerPieces)>& on_pieces,
                      const std::function<bool()>& client_connected);

}  // namespace nanoserve::server
