// `nanoserve pull`, `list` and `rm`, and --model NAME, run as a user runs them against the
// imitation Hub (tests/hub/fake_hub.h) through HF_ENDPOINT, with the cache in a temp folder.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gguf/file.h"
#include "hub/fake_hub.h"
#include "server/server_process.h"
#include "support/run_nanoserve.h"
#include "support/test_paths.h"

namespace nanoserve {
namespace {

using test::CommandResult;
using test::FakeHub;

// A Hub nothing answers: nothing listens on port 1 (binding it takes root).
constexpr const char* kUnreachable = "http://127.0.0.1:1";

class PullCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::remove_all(cache_);
    setenv("XDG_CACHE_HOME", cache_.c_str(), 1);
    setenv("HF_ENDPOINT", hub_.endpoint().c_str(), 1);
    unsetenv("HF_TOKEN");
    unsetenv("HF_HUB_OFFLINE");
  }
  void TearDown() override {
    for (const char* v : {"XDG_CACHE_HOME", "HF_ENDPOINT", "HF_HUB_OFFLINE"}) unsetenv(v);
  }

  // The id /v1/models gives the model that `server` serves.
  static std::string served_id(const test::ServerProcess& server) {
    auto res = server.client().Get("/v1/models");
    return res ? nlohmann::json::parse(res->body)["data"][0]["id"].get<std::string>() : "(no answer)";
  }

  FakeHub hub_;
  const std::string cache_ = test::temp_file("cli-hub-cache");
  const std::string tiny_path_ = test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf");
  const std::string tiny_ = test::read_file(tiny_path_);
  const std::string tiny_name_ = gguf::File::open(tiny_path_).metadata().get_string("general.name");
};

TEST_F(PullCommand, PullListServeByNameRemove) {
  hub_.add_repo("test/Tiny-GGUF", {{{"tiny-qwen3-q8_0.gguf", tiny_}}});
  const std::string path = cache_ + "/nanoserve/models/test/Tiny-GGUF/tiny-qwen3-q8_0.gguf";
  const CommandResult pull = test::run_nanoserve("pull test/Tiny-GGUF");
  ASSERT_EQ(pull.status, 0) << pull.err;
  EXPECT_EQ(pull.out, path + "\n");
  EXPECT_EQ(test::read_file(path), tiny_);
  EXPECT_NE(pull.err.find("nanoserve: tiny-qwen3-q8_0.gguf: 50% ("), std::string::npos) << pull.err;  // not a terminal
  EXPECT_NE(pull.err.find("serve it with nanoserve serve --model test/Tiny-GGUF"), std::string::npos) << pull.err;

  const CommandResult list = test::run_nanoserve("list");
  ASSERT_EQ(list.status, 0) << list.err;
  EXPECT_NE(list.out.find("test/Tiny-GGUF  tiny-qwen3-q8_0.gguf     3.7 MB"), std::string::npos) << list.out;

  setenv("HF_ENDPOINT", kUnreachable, 1);  // a pulled model needs no Hub
  {
    test::ServerProcess server("-t 2 --model test/Tiny-GGUF");
    EXPECT_EQ(served_id(server), tiny_name_);
    EXPECT_NE(server.log().find("test/Tiny-GGUF is " + path), std::string::npos) << server.log();
    EXPECT_EQ(server.stop(), 0);
  }
  const CommandResult info = test::run_nanoserve("info test/Tiny-GGUF");
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("architecture            qwen3"), std::string::npos) << info.out;

  const CommandResult rm = test::run_nanoserve("rm test/Tiny-GGUF");
  ASSERT_EQ(rm.status, 0) << rm.err;
  EXPECT_EQ(rm.out, "removed test/Tiny-GGUF/tiny-qwen3-q8_0.gguf\n");
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(test::run_nanoserve("list").out, "");
  const CommandResult again = test::run_nanoserve("rm test/Tiny-GGUF");
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("test/Tiny-GGUF is not in the cache"), std::string::npos) << again.err;
}

// Without --model, serve pulls the default model when the Hub answers, and later finds it in
// the cache even offline.
TEST_F(PullCommand, ServeWithoutModelPullsTheDefaultThenFindsItCached) {
  hub_.add_repo("Qwen/Qwen2.5-0.5B-Instruct-GGUF",
                {{{"qwen2.5-0.5b-instruct-q4_k_m.gguf", tiny_}, {"qwen2.5-0.5b-instruct-q8_0.gguf", tiny_}}});
  {
    test::ServerProcess server("-t 2");
    EXPECT_EQ(served_id(server), tiny_name_);
    EXPECT_NE(server.log().find("no --model given: serving Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q8_0"), std::string::npos)
        << server.log();
  }
  ASSERT_EQ(hub_.file_requests().size(), 1u);
  EXPECT_EQ(hub_.file_requests()[0].path, "/blobs/Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q8_0.gguf");
  const size_t asked = hub_.hub_requests().size();
  setenv("HF_HUB_OFFLINE", "1", 1);
  {
    test::ServerProcess server("-t 2");
    EXPECT_EQ(served_id(server), tiny_name_);
    EXPECT_EQ(server.log().find("RANDOM weights"), std::string::npos) << server.log();
  }
  EXPECT_EQ(hub_.hub_requests().size(), asked);
}

TEST_F(PullCommand, ErrorsSayWhatToDo) {
  hub_.add_repo("test/Tiny-GGUF", {{{"tiny-qwen3-q8_0.gguf", tiny_}}});
  const std::pair<std::string, std::string> cases[] = {
      {"pull ./tiny.gguf", "./tiny.gguf is a local path; give a Hugging Face model name"},
      {"pull test/Tiny-GGUF:Q2_K", "test/Tiny-GGUF has no Q2_K file; its quants: Q8_0"},
      {"pull test/None-GGUF", "no model repo test/None-GGUF on " + hub_.endpoint()},
      {"pull test/Tiny-GGUF:", "A model name is owner/repo, owner/repo:QUANT"},
      {"rm test/Tiny-GGUF", "test/Tiny-GGUF is not in the cache"},
      {"serve --model test/None-GGUF", "no model repo test/None-GGUF"},
  };
  for (const auto& [args, message] : cases) {
    const CommandResult r = test::run_nanoserve(args);
    EXPECT_EQ(r.status, 1) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  }
  setenv("HF_ENDPOINT", kUnreachable, 1);
  const CommandResult offline = test::run_nanoserve("pull test/Tiny-GGUF");
  EXPECT_EQ(offline.status, 1);
  EXPECT_NE(offline.err.find("cannot reach http://127.0.0.1:1"), std::string::npos) << offline.err;
}

TEST_F(PullCommand, AMultiPartModelIsPulledWholeButNotLoaded) {
  hub_.add_repo("test/Split-GGUF", {{{"split-Q8_0-00001-of-00002.gguf", tiny_.substr(0, 1000)},
                                     {"split-Q8_0-00002-of-00002.gguf", tiny_.substr(1000)}}});
  const CommandResult pull = test::run_nanoserve("pull test/Split-GGUF");
  ASSERT_EQ(pull.status, 0) << pull.err;
  EXPECT_NE(pull.err.find("the model is split into 2 files"), std::string::npos) << pull.err;
  const CommandResult info = test::run_nanoserve("info test/Split-GGUF");
  EXPECT_EQ(info.status, 1);
  const std::string dir = cache_ + "/nanoserve/models/test/Split-GGUF/";
  EXPECT_NE(info.err.find("test/Split-GGUF is split into 2 files (" + dir + "split-Q8_0-00001-of-00002.gguf, " + dir +
                          "split-Q8_0-00002-of-00002.gguf)"),
            std::string::npos)
      << info.err;
  EXPECT_NE(info.err.find("llama-gguf-split --merge"), std::string::npos) << info.err;
}

}  // namespace
}  // namespace nanoserve
