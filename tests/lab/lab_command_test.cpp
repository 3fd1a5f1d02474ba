// `nanoserve lab` as a user runs it: the list, a usage error, and every experiment end to end on
// the tiny golden model, non-interactively, each writing its row.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/child_server.h"
#include "lab/experiment.h"
#include "support/run_nanoserve.h"
#include "support/test_paths.h"

namespace nanoserve {
namespace {

using test::CommandResult;

// Small lengths keep the label quick; the lab scales 4k and 16k alike to fit.
const std::string kQuick = " --max-context 512 -t 2";

std::string tiny_model() { return test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf"); }

std::vector<nlohmann::json> rows_of(const std::string& path) {
  std::vector<nlohmann::json> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

TEST(LabCommand, ListsTheExperiments) {
  const CommandResult r = test::run_nanoserve("lab");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const lab::Experiment& e : lab::load_experiments("")) EXPECT_NE(r.out.find(e.id), std::string::npos) << e.id;
}

TEST(LabCommand, AnUnknownExperimentListsTheIds) {
  const CommandResult r = test::run_nanoserve("lab no-such-thing -m model.gguf");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no experiment \"no-such-thing\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("decode-bandwidth"), std::string::npos) << r.err;
  const CommandResult no_model = test::run_nanoserve("lab ttft-4k");
  EXPECT_EQ(no_model.status, 2);
  EXPECT_NE(no_model.err.find("-m MODEL.gguf"), std::string::npos) << no_model.err;
  const CommandResult bad_url = test::run_nanoserve("lab ttft-4k -m model.gguf --url ftp://x");
  EXPECT_EQ(bad_url.status, 2);
  EXPECT_NE(bad_url.err.find("--url"), std::string::npos) << bad_url.err;
}

TEST(LabCommand, AMalformedFileInExperimentsNamesItAndTheField) {
  const std::string dir = test::temp_file("lab-experiments");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/broken.json") << R"({"id": "broken", "order": 1})";
  const CommandResult r = test::run_nanoserve("lab --experiments " + dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(dir + "/broken.json: field \"title\": missing"), std::string::npos) << r.err;
}

class EveryExperiment : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryExperiment, RunsAndWritesItsRow) {
  const std::string& id = GetParam();
  const std::string model = tiny_model();
  // The speculation experiment continues a Python file of the machine's (its standard library's
  // argparse.py); here it continues the repository's own, so it runs on any machine.
  std::string experiments;
  if (id == "speculation") {
    nlohmann::json e = nlohmann::json::parse(test::read_file(test::source_path("experiments/speculation.json")));
    e["measurement"]["source"] = test::source_path("tests/model/data/task_queue.py");
    const std::string dir = test::temp_file("lab-speculation-experiments");
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/speculation.json") << e.dump();
    experiments = " --experiments " + dir;
  }
  const std::string out = test::temp_file("lab-" + id + ".jsonl");
  const CommandResult r = test::run_nanoserve("lab " + id + " -m " + model + " --no-prompt --predict 42 --out " + out +
                                              experiments + kQuick);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("first principles"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Why they differ"), std::string::npos) << r.out;
  const std::vector<nlohmann::json> rows = rows_of(out);
  ASSERT_EQ(rows.size(), 1u);
  const nlohmann::json& row = rows.front();
  EXPECT_EQ(row["experiment"], id);
  EXPECT_EQ(row["prediction"], 42.0);
  EXPECT_GT(row["measured"].get<double>(), 0);
  EXPECT_GT(row["first_principles"].get<double>(), 0);
  EXPECT_FALSE(row["unit"].get<std::string>().empty());
  EXPECT_FALSE(row["host"]["cpu"].get<std::string>().empty());
  EXPECT_FALSE(row["host"]["simd"].get<std::string>().empty());
  EXPECT_EQ(row["model_file"], "tiny-qwen3-Q8_0.gguf");
  EXPECT_FALSE(row["inputs"].empty());
  ASSERT_FALSE(row["points"].empty());
  for (const nlohmann::json& point : row["points"]) {
    EXPECT_GT(point["measured"].get<double>(), 0) << point.dump();
    EXPECT_GT(point["first_principles"].get<double>(), 0) << point.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Lab, EveryExperiment,
                         ::testing::Values("decode-bandwidth", "kv-memory", "ttft-4k", "eight-streams",
                                           "server-overhead", "prefix-cache", "speculation"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(LabCommand, SubMeasurementsAreInTheRows) {
  const std::string out = test::temp_file("lab-subs.jsonl");
  const CommandResult r = test::run_nanoserve("lab kv-memory eight-streams -m " + tiny_model() +
                                              " --no-prompt --out " + out + kQuick);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<nlohmann::json> rows = rows_of(out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0]["prediction"].is_null());  // --no-prompt without --predict
  // Peak memory at both lengths, scaled alike to fit --max-context (and said so).
  ASSERT_EQ(rows[0]["points"].size(), 2u);
  EXPECT_EQ(rows[0]["points"][1]["variables"]["tokens"].get<double>(),
            4 * rows[0]["points"][0]["variables"]["tokens"].get<double>());
  EXPECT_NE(rows[0]["notes"].dump().find("--max-context"), std::string::npos);
  EXPECT_TRUE(rows[0]["details"].contains("kv_bytes_per_token_measured"));
  // Batch and sequential, aggregate and per stream.
  ASSERT_EQ(rows[1]["points"].size(), 2u);
  EXPECT_EQ(rows[1]["points"][0]["label"], "batch");
  EXPECT_EQ(rows[1]["points"][1]["label"], "sequential");
  for (const auto& point : rows[1]["points"]) {
    EXPECT_GT(point["details"]["per_stream_tok_s"].get<double>(), 0);
    EXPECT_GT(point["details"]["aggregate_tok_s"].get<double>(), 0);
  }
}

TEST(LabCommand, AsksForThePredictionUntilItIsANumber) {
  const std::string out = test::temp_file("lab-asked.jsonl");
  const CommandResult r = test::run_nanoserve(
      "lab server-overhead -m " + tiny_model() + " --out " + out + kQuick, "a lot\n0.25\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("your prediction (ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not a number: a lot"), std::string::npos) << r.out;
  EXPECT_EQ(rows_of(out).at(0)["prediction"], 0.25);
}

TEST(LabCommand, MeasuresTheServerAtUrl) {
  const bench::ChildServer server({"--model", tiny_model(), "--threads", "2", "--ctx", "512"}, std::chrono::seconds(60),
                                  test::nanoserve_binary());
  const std::string out = test::temp_file("lab-url.jsonl");
  const CommandResult r = test::run_nanoserve("lab server-overhead eight-streams -m " + tiny_model() + " --url http://127.0.0.1:" +
                                              std::to_string(server.port()) + " --predict eight-streams=100 --no-prompt --out " +
                                              out + kQuick);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<nlohmann::json> rows = rows_of(out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0]["prediction"].is_null());
  EXPECT_EQ(rows[1]["prediction"], 100.0);
  for (const auto& row : rows) EXPECT_EQ(row["server"], "http://127.0.0.1:" + std::to_string(server.port()));
  ASSERT_EQ(rows[1]["points"].size(), 1u);  // only the given server
  EXPECT_NE(rows[1]["notes"].dump().find("only that server"), std::string::npos);
}

}  // namespace
}  // namespace nanoserve
