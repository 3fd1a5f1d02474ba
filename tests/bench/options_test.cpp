// Flags of the benchmark commands: URLs, model specs and the suite's sizes are checked
// before anything runs, with messages naming the flag.
#include <gtest/gtest.h>

#include "bench/bench_model.h"
#include "bench/endpoint.h"
#include "bench/suite_options.h"

namespace nanoserve::bench {
namespace {

TEST(Endpoint, ParsesBaseUrls) {
  const Endpoint e = parse_endpoint("http://localhost:11434/v1");
  EXPECT_EQ(e.host, "localhost");
  EXPECT_EQ(e.port, 11434);
  EXPECT_EQ(e.prefix, "");
  EXPECT_EQ(e.path("/v1/completions"), "/v1/completions");
  EXPECT_EQ(parse_endpoint("http://10.0.0.2").port, 80);
  EXPECT_EQ(parse_endpoint("https://example.com").port, 443);
  EXPECT_EQ(parse_endpoint("http://h:8000/proxy/").path("/v1/models"), "/proxy/v1/models");
  EXPECT_EQ(parse_endpoint("http://[::1]:8080").host, "::1");
  EXPECT_EQ(parse_endpoint("http://127.0.0.1:8080").origin(), "http://127.0.0.1:8080");
}

TEST(Endpoint, RejectsWhatIsNotAnHttpUrl) {
  for (const char* bad : {"localhost:8080", "ftp://h:1", "http://:8080", "http://h:0", "http://h:99999", "http://h:x",
                          "http://user:pw@h:1"}) {
    EXPECT_THROW(parse_endpoint(bad), std::invalid_argument) << bad;
  }
}

TEST(ModelSpec, PresetColonType) {
  const ModelSpec s = parse_model_spec("qwen3-1.7b:Q4_K_M");
  EXPECT_EQ(s.preset, "qwen3-1.7b");
  EXPECT_EQ(s.type, "Q4_K_M");
  EXPECT_EQ(s.label(), "qwen3-1.7b:Q4_K_M");
  for (const char* bad : {"qwen3-1.7b", ":Q8_0", "qwen3-1.7b:", "nosuch:Q8_0", "qwen3-1.7b:Q9_9"})
    EXPECT_THROW(parse_model_spec(bad), std::invalid_argument) << bad;
}

TEST(SuiteOptions, QuickIsASmallerSweep) {
  SuiteOptions full = resolve_options({}), quick_in;
  quick_in.quick = true;
  const SuiteOptions quick = resolve_options(quick_in);
  EXPECT_EQ(full.repeats, 3);
  EXPECT_EQ(quick.repeats, 3);
  EXPECT_EQ(full.raw_pairs, 16);
  EXPECT_LT(quick.raw_pairs, full.raw_pairs);
  EXPECT_LT(quick.context_lengths.size(), full.context_lengths.size());
  EXPECT_EQ(full.context_lengths.back(), 16384);
  EXPECT_EQ(full.context_kv_types, (std::vector<std::string>{"f16", "q8_0"}));  // both caches, side by side
  EXPECT_EQ(full.streams, 8);
  EXPECT_EQ(full.concurrency_engines, (std::vector<std::string>{"sequential", "batch"}));
  EXPECT_LT(quick.models.size(), full.models.size());
  EXPECT_EQ(full.spec_rows, 16);
  EXPECT_EQ(full.spec_prompt, 512);
  EXPECT_EQ(full.spec_max_tokens, 256);
  EXPECT_LT(quick.spec_files, full.spec_files);
}

TEST(SuiteOptions, GivenSizesWinAndAreChecked) {
  SuiteOptions o;
  o.quick = true;
  o.context_lengths = {512, 128, 512};
  o.streams = 2;
  const SuiteOptions r = resolve_options(o);
  EXPECT_EQ(r.context_lengths, (std::vector<int>{128, 512}));  // sorted, duplicates dropped
  EXPECT_EQ(r.streams, 2);

  auto rejects = [](SuiteOptions bad, const std::string& flag) {
    try {
      resolve_options(std::move(bad));
      ADD_FAILURE() << "accepted a bad " << flag;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
    }
  };
  SuiteOptions bad;
  bad.phases = {"contxt"};
  rejects(bad, "contxt");
  bad = {};
  bad.streams = -2;
  rejects(bad, "--streams");
  bad = {};
  bad.spec_rows = 65;
  rejects(bad, "--spec-rows");
  bad = {};
  bad.context_lengths = {128, -1};
  rejects(bad, "--context-lengths");
  bad = {};
  bad.context_kv_types = {"f16", "q4_0"};
  rejects(bad, "q8_0");  // the message names the types there are
  bad = {};
  bad.models = {"qwen3-0.6b"};
  rejects(bad, "preset:type");
  bad = {};
  bad.threads = -1;
  rejects(bad, "--threads");
}

}  // namespace
}  // namespace nanoserve::bench
