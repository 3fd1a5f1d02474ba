// `nanoserve bench suite` and `nanoserve bench charts` as a user runs them, on the tiny
// golden model: the JSONL rows parse and match the schema, an engine this build lacks
// fails its part with the server's own message (the suite goes on), the charts and
// summary.md are written, and bad flags are refused with a message.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "bench/row_schema.h"
#include "support/run_nanoserve.h"
#include "support/test_paths.h"

namespace nanoserve::bench {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::vector<json> read_rows(const fs::path& path) {
  std::vector<json> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line));  // throws on a bad line
  return rows;
}

class SuiteCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nanoserve-suite-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    model_ = test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string model_;
};

TEST_F(SuiteCommand, WritesRowsThatMatchTheSchemaAndCharts) {
  const std::string out = (dir_ / "results").string();
  const test::CommandResult suite = test::run_nanoserve(
      "bench suite overhead concurrency raw --model " + model_ + " --out " + out +
      " --threads 1 --repeats 2 --overhead-mock-requests 6 --overhead-engine-requests 2 --raw-pairs 2 --raw-prompt 8"
      " --raw-max-tokens 6 --streams 3 --concurrency-prompt 8 --concurrency-max-tokens 5"
      " --concurrency-engines sequential,nosuch,mock");
  ASSERT_EQ(suite.status, 0) << suite.err;

  const auto overhead = read_rows(fs::path(out) / "overhead.jsonl");
  const auto concurrency = read_rows(fs::path(out) / "concurrency.jsonl");
  const auto raw = read_rows(fs::path(out) / "raw.jsonl");
  EXPECT_FALSE(fs::exists(fs::path(out) / "context.jsonl"));  // not asked for
  size_t errors = 0;
  for (const auto* rows : {&overhead, &concurrency, &raw})
    for (const json& row : *rows) {
      EXPECT_EQ(schema_problems(row), std::vector<std::string>{}) << row.dump();
      if (row["kind"] == "error") {
        ++errors;
        EXPECT_EQ(row["engine"], "nosuch");
        EXPECT_NE(row["error"].get<std::string>().find("--engine: nosuch"), std::string::npos) << row["error"];
      } else if (row["engine"] != "mock") {
        EXPECT_TRUE(row["exact_tokens"].get<bool>()) << row.dump();
      }
      if (row["kind"] == "request" && row["overhead_ttft_ms"].is_number()) {
        EXPECT_DOUBLE_EQ(row["overhead_ttft_ms"].get<double>(),
                         row["client_ttft_ms"].get<double>() - row["engine_ttft_ms"].get<double>());
      }
    }
  EXPECT_EQ(errors, 1u);
  EXPECT_EQ(overhead.size(), 6u + 6u + 2u);      // mock, mock with logit_bias, sequential
  EXPECT_EQ(concurrency.size(), 2u * 2u * 3u + 1u);  // 2 engines × 2 rounds × 3 streams, 1 error
  // Raw: 2 pairs of the sequential engine, 2 of the batch engine with one stream, 2 of rounds of
  // 3 streams; both sides of a pair run the arm's engine, and a round's streams start together.
  std::map<std::string, int> raw_arms;
  for (const json& row : raw) {
    ASSERT_EQ(row["kind"], "request") << row.dump();
    const std::string engine = row["in_process_engine"];
    EXPECT_EQ(row["engine"], engine) << row.dump();
    ++raw_arms[fmt::format("{}/{}/{}", engine, row["streams"].get<int>(), row["target"].get<std::string>())];
    EXPECT_LT(row["stream"].get<int>(), row["streams"].get<int>());
    EXPECT_GE(row["start_offset_us"].get<int64_t>(), 0);
    EXPECT_LT(row["start_offset_us"].get<int64_t>(), 1'000'000) << row.dump();
  }
  EXPECT_EQ(raw_arms, (std::map<std::string, int>{{"sequential/1/served", 2}, {"sequential/1/in-process", 2},
                                                  {"batch/1/served", 2}, {"batch/1/in-process", 2},
                                                  {"batch/3/served", 6}, {"batch/3/in-process", 6}}));
  EXPECT_NE(suite.err.find("1 failed part"), std::string::npos) << suite.err;

  const std::string docs = (dir_ / "docs").string();
  const test::CommandResult charts = test::run_nanoserve("bench charts --in " + out + " --docs " + docs);
  ASSERT_EQ(charts.status, 0) << charts.err;
  for (const char* png : {"bench-overhead-histogram.png", "bench-concurrency-timeline.png", "bench-raw-pairs.png"})
    EXPECT_GT(fs::file_size(fs::path(docs) / png), 1000u) << png;
  EXPECT_FALSE(fs::exists(fs::path(docs) / "bench-context-ttft.png"));  // no context rows, no chart
  const std::string summary = test::read_file((fs::path(out) / "summary.md").string());
  for (const char* text : {"## Machine and build", "## Server overhead", "## Concurrent streams", "## Context length",
                           "Not measured in this run", "nosuch engine", "](../docs/bench-raw-pairs.png)",
                           "| sequential, 1 stream (2 pairs): served − in-process", "| batch, 1 stream (2 pairs)",
                           "| batch, 3 streams (2 pairs)", "| aggregate (%) |"})
    EXPECT_NE(summary.find(text), std::string::npos) << text << "\n" << summary;
}

// The prefix phase on the tiny model: every case's rows, warm requests that report the cached
// tokens they found, and its section and chart.
TEST_F(SuiteCommand, ThePrefixPhaseMeasuresColdAndWarmRequests) {
  const std::string out = (dir_ / "results").string();
  const test::CommandResult suite = test::run_nanoserve(
      "bench suite prefix --model " + model_ + " --out " + out +
      " --threads 1 --repeats 2 --streams 3 --prefix-prompt 40 --prefix-new-tokens 5 --prefix-restart-prompt 48"
      " --prefix-shared-prompt 32 --prefix-shared-distinct 4 --prefix-max-tokens 3");
  ASSERT_EQ(suite.status, 0) << suite.err;
  const auto rows = read_rows(fs::path(out) / "prefix.jsonl");
  std::map<std::string, int> cases;
  for (const json& row : rows) {
    EXPECT_EQ(schema_problems(row), std::vector<std::string>{}) << row.dump();
    ASSERT_EQ(row["kind"], "request") << row.dump();
    EXPECT_TRUE(row["exact_tokens"].get<bool>()) << row.dump();
    const std::string c = row["case"];
    std::string key = c;
    if (row.contains("cache")) key.append("/").append(row["cache"].get<std::string>());
    ++cases[key];
    const int prompt = row["prompt_tokens"];
    const int cached = row["cached_tokens"];
    if (c == "cold" || c == "restart_cold") {
      EXPECT_EQ(cached, 0) << row.dump();
    }
    if (c == "followup") {
      EXPECT_EQ(cached, 40) << row.dump();  // every position of the 40-token conversation (the last 8 a tail)
    }
    // The same prompt answered before, in memory: every position.
    if (c == "resend") {
      EXPECT_EQ(cached, prompt) << row.dump();
    }
    // After a restart, from the disk tier's whole blocks (it then computed prompt + 2 positions):
    // all but its last token when that filled the block holding it, else its whole blocks of 16.
    if (c == "restart_warm") {
      const bool filled = prompt % 16 == 0 || (prompt + 2) / 16 > prompt / 16;
      EXPECT_EQ(cached, filled ? prompt - 1 : prompt / 16 * 16) << row.dump();
    }
    if (c == "shared" && row["cache"] == "off") {
      EXPECT_EQ(cached, 0) << row.dump();
    }
  }
  EXPECT_EQ(cases, (std::map<std::string, int>{{"cold", 2}, {"followup", 2}, {"resend", 2}, {"restart_cold", 2},
                                               {"restart_warm", 2}, {"shared/on", 6}, {"shared/off", 6}}));
  EXPECT_FALSE(fs::exists(fs::path(out) / "prefix-cache-dir"));  // the restart's folder is removed

  const std::string docs = (dir_ / "docs").string();
  const test::CommandResult charts = test::run_nanoserve("bench charts --in " + out + " --docs " + docs);
  ASSERT_EQ(charts.status, 0) << charts.err;
  EXPECT_GT(fs::file_size(fs::path(docs) / "bench-prefix-ttft.png"), 1000u);
  const std::string summary = test::read_file((fs::path(out) / "summary.md").string());
  for (const char* text : {"## Prefix cache", "the follow-up resent", "sooner than cold", "after a restart"})
    EXPECT_NE(summary.find(text), std::string::npos) << text << "\n" << summary;
}

// The spec phase on the tiny model (steps, random weights) and pycoder (continuations of two
// Python files written here): every case's rows match the schema, drafts show in the rows of
// lookup and draft and never in those of off, in every request of draft-always (fixed lengths),
// and the section and chart are written.
TEST_F(SuiteCommand, TheSpecPhaseMeasuresStepsContinuationsAndStreams) {
  const fs::path sources = dir_ / "python";
  fs::create_directories(sources);
  for (const char* name : {"argparse.py", "csv.py"}) {
    std::ofstream py(sources / name);
    py << "# a module\n\n";
    for (int i = 0; i < 20; ++i)
      py << "def field_" << i << "(record):\n    return record.get('field_" << i << "', None)\n\n";
  }
  const std::string out = (dir_ / "results").string();
  const test::CommandResult suite = test::run_nanoserve(
      "bench suite spec --model " + model_ + " --out " + out +
      " --threads 1 --repeats 1 --streams 2 --spec-rows 3 --spec-files 2 --spec-prompt 64 --spec-max-tokens 24"
      " --spec-pairs 1 --spec-model-dir " + test::shared_path("models/pycoder") + " --spec-source-dir " +
      sources.string() + " --spec-mtp-model " + test::source_path("tests/model/data/golden/tiny-qwen35-mtp-F16.gguf"));
  ASSERT_EQ(suite.status, 0) << suite.err;
  const auto rows = read_rows(fs::path(out) / "spec.jsonl");
  std::map<std::string, int> cases;
  for (const json& row : rows) {
    EXPECT_EQ(schema_problems(row), std::vector<std::string>{}) << row.dump();
    ASSERT_NE(row["kind"], "error") << row.dump();
    if (row["kind"] == "step") {
      ++cases["step"];
      continue;
    }
    EXPECT_TRUE(row["exact_tokens"].get<bool>()) << row.dump();
    ++cases[row["case"].get<std::string>() + "/" + row["spec"].get<std::string>()];
    const int64_t steps = row["engine_decode_steps"], drafted = row["engine_draft_tokens"];
    if (row["spec"] == "off") {
      EXPECT_EQ(drafted, 0) << row.dump();
      EXPECT_EQ(steps, row["completion_tokens"].get<int64_t>()) << row.dump();
    } else {
      EXPECT_EQ(steps + row["engine_accepted_tokens"].get<int64_t>(), row["completion_tokens"].get<int64_t>());
      if (row["spec"] == "draft-always") {
        EXPECT_GT(drafted, 0) << row.dump();
      }
    }
  }
  EXPECT_EQ(cases, (std::map<std::string, int>{{"step", 3 * 5},
                                               {"continue/off", 2}, {"continue/lookup", 2}, {"continue/draft", 2},
                                               {"continue/draft-always", 2},
                                               {"streams/off", 4}, {"streams/lookup", 4}, {"streams/draft", 4},
                                               {"streams/draft-always", 4},
                                               {"in_flight/off", 8}, {"in_flight/lookup", 8}, {"in_flight/draft", 8},
                                               {"in_flight/draft-always", 8},
                                               {"random/off", 2}, {"random/lookup", 2},
                                               {"random_streams/off", 4}, {"random_streams/lookup", 4},
                                               {"mtp/off", 2}, {"mtp/mtp", 2}}));

  const std::string docs = (dir_ / "docs").string();
  const test::CommandResult charts = test::run_nanoserve("bench charts --in " + out + " --docs " + docs);
  ASSERT_EQ(charts.status, 0) << charts.err;
  EXPECT_GT(fs::file_size(fs::path(docs) / "bench-spec-step-rows.png"), 1000u);
  const std::string summary = test::read_file((fs::path(out) / "summary.md").string());
  for (const char* text : {"## Speculative decoding", "A step's cost by its rows", "tokens per read", "| draft-always |",
                           "accepted by position in the draft", "nothing to guess", "kept in flight, aggregate (2, 4 requests each)",
                           "A hybrid's own MTP block", "| mtp |"})
    EXPECT_NE(summary.find(text), std::string::npos) << text << "\n" << summary;
}

TEST_F(SuiteCommand, RefusesBadFlagsWithAMessage) {
  const auto bad_phase = test::run_nanoserve("bench suite contxt --out " + (dir_ / "r").string());
  EXPECT_NE(bad_phase.status, 0);
  EXPECT_NE(bad_phase.err.find("unknown phase 'contxt'"), std::string::npos) << bad_phase.err;
  const auto bad_streams =
      test::run_nanoserve("bench suite concurrency --streams 0 --model " + model_ + " --out " + (dir_ / "r").string());
  EXPECT_NE(bad_streams.status, 0);
  EXPECT_NE(bad_streams.err.find("--streams"), std::string::npos) << bad_streams.err;
  const auto url_without_model = test::run_nanoserve("bench suite overhead --url http://127.0.0.1:1 --out " +
                                                     (dir_ / "r").string());
  EXPECT_NE(url_without_model.err.find("give --model"), std::string::npos) << url_without_model.err;
  const auto bad_url = test::run_nanoserve("bench client --url localhost:8080 --prompt hi");
  EXPECT_NE(bad_url.status, 0);
  EXPECT_NE(bad_url.err.find("expected http://host:port"), std::string::npos) << bad_url.err;
  const auto no_prompt = test::run_nanoserve("bench client");
  EXPECT_NE(no_prompt.status, 0);
  EXPECT_NE(no_prompt.err.find("--prompt"), std::string::npos) << no_prompt.err;
  const auto nothing = test::run_nanoserve("bench charts --in " + (dir_ / "empty").string());
  EXPECT_NE(nothing.status, 0);
  EXPECT_NE(nothing.err.find("run `nanoserve bench suite` first"), std::string::npos) << nothing.err;
}

TEST_F(SuiteCommand, ANoAnswerServerIsAnErrorNotAHang) {
  const auto refused = test::run_nanoserve("bench client --url http://127.0.0.1:1 --prompt hi --timeout 5");
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.err.find("no answer from http://127.0.0.1:1"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace nanoserve::bench
