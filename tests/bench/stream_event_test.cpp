// Reading the events of OpenAI-style streams (completions, chat, usage, errors) into a
// StreamRecord, as the HTTP client does for every event it receives.
#include <gtest/gtest.h>

#include "bench/stream_client.h"

namespace nanoserve::bench {
namespace {

TEST(StreamEvent, CompletionChunksCarryText) {
  StreamRecord r;
  EXPECT_TRUE(read_stream_event(R"({"choices":[{"index":0,"text":"Hi","finish_reason":null}]})", 100, r));
  EXPECT_TRUE(read_stream_event(R"({"choices":[{"index":0,"text":"","finish_reason":"length"}]})", 150, r));
  EXPECT_EQ(r.chunk_us, std::vector<int64_t>{100});  // an empty text is no chunk
  EXPECT_EQ(r.text_bytes, 2u);
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_TRUE(r.ok());
}

TEST(StreamEvent, ChatDeltasCarryText) {
  StreamRecord r;
  read_stream_event(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})", 10, r);
  read_stream_event(R"({"choices":[{"index":0,"delta":{"content":"Hel"}}]})", 20, r);
  read_stream_event(R"({"choices":[{"index":0,"delta":{"content":"lo"}}]})", 30, r);
  read_stream_event(R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})", 40, r);
  EXPECT_EQ(r.chunk_us, (std::vector<int64_t>{20, 30}));
  EXPECT_EQ(r.finish_reason, "stop");
}

TEST(StreamEvent, UsageAndTheEngineClock) {
  StreamRecord r;
  read_stream_event(R"({"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":5,"total_tokens":12},
                        "nanoserve":{"queue_ms":0.5,"ttft_ms":12.5,"prefill_tok_s":560,"decode_tok_s":null,
                                     "peak_memory_bytes":1048576}})",
                    99, r);
  EXPECT_EQ(r.prompt_tokens, 7);
  EXPECT_EQ(r.completion_tokens, 5);
  ASSERT_TRUE(r.engine);
  EXPECT_EQ(r.engine->queue_ms, 0.5);
  EXPECT_EQ(r.engine->ttft_ms, 12.5);
  EXPECT_EQ(r.engine->prefill_tok_s, 560);
  EXPECT_FALSE(r.engine->decode_tok_s);  // null: not reported
  EXPECT_EQ(r.engine->peak_memory_bytes, 1048576);
}

TEST(StreamEvent, DoneEndsTheStream) {
  StreamRecord r;
  EXPECT_FALSE(read_stream_event("[DONE]", 500, r));
  EXPECT_EQ(r.end_us, 500);
}

TEST(StreamEvent, ErrorsAreKept) {
  StreamRecord r;
  read_stream_event(R"({"error":{"message":"generation failed: boom","type":"server_error"}})", 1, r);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("generation failed: boom"), std::string::npos);
  StreamRecord bad;
  read_stream_event("{not json", 1, bad);
  EXPECT_NE(bad.error.find("not a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace nanoserve::bench
