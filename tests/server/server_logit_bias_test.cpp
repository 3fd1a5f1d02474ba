// --logit-bias: the server's bias is added to every request's, whatever its API, and a
// request's own bias for the same token wins. Greedy output of the mock engine shows it: a
// bias of +100 makes every token the biased one.
#include <gtest/gtest.h>

#include <string>

#include "server/api_client.h"
#include "server/server_process.h"
#include "support/run_nanoserve.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;

std::string completion_text(httplib::Client& c, const json& bias) {
  json body = {{"prompt", "Once"}, {"max_tokens", 4}, {"temperature", 0}};
  if (!bias.is_null()) body["logit_bias"] = bias;
  const JsonResponse r = post_json(c, "/v1/completions", body);
  EXPECT_EQ(r.status, 200) << r.text;
  return r.body["choices"][0]["text"];
}

TEST(ServerLogitBias, AddsToEveryRequestAndTheRequestsOwnWins) {
  ServerProcess plain(mock_server_args(""));
  auto p = plain.client();
  const std::string forty = completion_text(p, {{"40", 100}});
  const std::string fifty = completion_text(p, {{"50", 100}});
  ASSERT_NE(forty, fifty);

  ServerProcess biased(mock_server_args("--logit-bias 40+100"));
  auto b = biased.client();
  EXPECT_EQ(completion_text(b, nullptr), forty);
  EXPECT_EQ(completion_text(b, {{"40", -100}, {"50", 100}}), fifty);
  // The other APIs take the same path.
  const JsonResponse message = post_json(b, "/v1/messages", {{"max_tokens", 4}, {"temperature", 0},
                                                            {"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  ASSERT_EQ(message.status, 200) << message.text;
  EXPECT_EQ(message.body["content"][0]["text"], forty);
}

TEST(ServerLogitBias, AMalformedOrUnknownTokenIsRefusedAtStart) {
  const CommandResult malformed = run_nanoserve("serve " + mock_server_args("--port 0 --logit-bias 40x"));
  EXPECT_NE(malformed.status, 0);
  EXPECT_NE(malformed.err.find("--logit-bias 40x: expected TOKEN+BIAS"), std::string::npos) << malformed.err;
  const CommandResult unknown = run_nanoserve("serve " + mock_server_args("--port 0 --logit-bias 99999999+1"));
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.err.find("token 99999999 is not in the vocabulary"), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace nanoserve::test
