// A real run against `nanoserve serve --engine mock` (started by the suite's own
// ChildServer): every row matches the schema, overhead is exactly client − engine on the
// same request, and with the benchmark's logit_bias every token arrives as its own chunk.
#include <gtest/gtest.h>

#include "bench/child_server.h"
#include "bench/result_row.h"
#include "bench/row_schema.h"
#include "bench/stream_client.h"
#include "support/test_paths.h"

namespace nanoserve::bench {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

TEST(MockRun, RowsMatchTheSchemaAndOverheadIsClientMinusEngine) {
  const std::string model_path = test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf");
  const BenchModel model = inspect_model(model_path);
  ASSERT_FALSE(model.silent_tokens.empty());  // the passage has multi-byte characters split across tokens
  ChildServer server({"--model", model_path, "--engine", "mock", "--mock-token-delay-us", "300"}, 60s,
                     test::nanoserve_binary());
  StreamClient client(server.endpoint());
  const HostInfo host = probe_host();
  const RowContext rc{.host = &host, .run_id = "test", .phase = "overhead", .engine = "mock", .target = "served",
                      .model = &model, .threads = 0};
  constexpr int kTokens = 24;
  for (int i = 0; i < 4; ++i) {
    const BenchRequest request = bench_request(model, 16, kTokens, static_cast<uint64_t>(i));
    const StreamRecord record = client.stream("/v1/completions", completion_body(request, ""));
    ASSERT_TRUE(record.ok()) << record.error;
    // As the JSONL file holds it.
    const json row = json::parse(request_row(rc, {{"request_index", i}}, request, record).dump());
    EXPECT_EQ(schema_problems(row), std::vector<std::string>{}) << row.dump();

    EXPECT_EQ(row["completion_tokens"], kTokens);
    EXPECT_EQ(row["text_chunks"], kTokens);
    EXPECT_EQ(row["exact_tokens"], true);
    EXPECT_EQ(row["finish_reason"], "length");
    EXPECT_EQ(row["prompt_tokens"], 16);
    EXPECT_EQ(row["logit_bias_entries"], model.silent_tokens.size());
    const double client_ttft = row["client_ttft_ms"], engine_ttft = row["engine_ttft_ms"];
    EXPECT_DOUBLE_EQ(row["overhead_ttft_ms"].get<double>(), client_ttft - engine_ttft);
    EXPECT_DOUBLE_EQ(row["overhead_total_ms"].get<double>(),
                     row["client_last_chunk_ms"].get<double>() - row["engine_last_token_ms"].get<double>());
    EXPECT_DOUBLE_EQ(row["engine_last_token_ms"].get<double>(),
                     engine_ttft + (kTokens - 1) / row["engine_decode_tok_s"].get<double>() * 1e3);
    EXPECT_DOUBLE_EQ(client_ttft, row["chunk_arrival_us"][0].get<double>() / 1e3);
    EXPECT_DOUBLE_EQ(row["client_last_chunk_ms"].get<double>(), row["chunk_arrival_us"].back().get<double>() / 1e3);
    // The client's clock starts before the engine's and stops after it.
    EXPECT_GT(row["overhead_ttft_ms"].get<double>(), 0);
    EXPECT_GT(row["overhead_total_ms"].get<double>(), 0);
  }
}

TEST(MockRun, WithoutTheBanSomeTokensShareAChunk) {
  const std::string model_path = test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf");
  const BenchModel model = inspect_model(model_path);
  ChildServer server({"--model", model_path, "--engine", "mock"}, 60s, test::nanoserve_binary());
  StreamClient client(server.endpoint());
  BenchRequest request = bench_request(model, 8, 200, 1);
  request.banned.clear();
  const StreamRecord record = client.stream("/v1/completions", completion_body(request, ""));
  ASSERT_TRUE(record.ok()) << record.error;
  EXPECT_EQ(record.completion_tokens, 200);
  EXPECT_LT(record.chunk_us.size(), 200u);  // the passage's multi-byte characters span tokens
}

TEST(MockRun, ErrorsComeBackAsRecords) {
  const std::string model_path = test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf");
  ChildServer server({"--model", model_path, "--engine", "mock"}, 60s, test::nanoserve_binary());
  StreamClient client(server.endpoint());
  const StreamRecord refused = client.stream("/v1/completions", {{"prompt", "x"}, {"max_tokens", 0}});
  EXPECT_EQ(refused.http_status, 400);
  EXPECT_NE(refused.error.find("max_tokens"), std::string::npos) << refused.error;
  server.stop();
  const StreamRecord gone = client.stream("/v1/completions", {{"prompt", "x"}});
  EXPECT_FALSE(gone.ok());
  EXPECT_NE(gone.error.find("no answer"), std::string::npos) << gone.error;
}

TEST(ChildServer, AServerThatCannotStartIsReportedWithItsLog) {
  try {
    ChildServer server({"--engine", "nosuch"}, 10s, test::nanoserve_binary());
    FAIL() << "started";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("exited before it listened"), std::string::npos) << what;
    EXPECT_NE(what.find("nosuch"), std::string::npos) << what;  // the server's own message
  }
}

}  // namespace
}  // namespace nanoserve::bench
