// Pulls against the imitation Hub (fake_hub.h): redirects, tokens, ranges and resumption,
// checksums, refusals, the cache, and offline use.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "hub/fake_hub.h"
#include "hub/pull.h"
#include "support/test_paths.h"

namespace nanoserve::hub {
namespace {

namespace fs = std::filesystem;
using test::FakeFile;
using test::FakeHub;
using test::FakeRepo;

// Bytes that differ from position to position, so a misplaced range shows.
std::string bytes_of(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 7 + i / 251) & 0xff);
  return s;
}

// A Hub nothing answers: nothing listens on port 1 (binding it takes root).
constexpr const char* kUnreachable = "http://127.0.0.1:1";

class Pull : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(root_);
    hub_.add_repo("org/Model-GGUF", {{{"model-q4_k_m.gguf", q4_}, {"model-q8_0.gguf", q8_}}});
  }

  std::vector<fs::path> pull(const std::string& name, const HubConfig& config) {
    return pull_model(*parse_model_name(name), config, cache_);
  }
  std::string pull_error(const std::string& name, const HubConfig& config) {
    try {
      pull(name, config);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "no error";
  }

  const std::string q4_ = bytes_of(300'000, 1), q8_ = bytes_of(500'000, 2);
  FakeHub hub_;
  const std::string root_ = test::temp_file("hub-cache");
  const ModelCache cache_{root_};
};

TEST_F(Pull, DefaultQuantThroughTheRedirect) {
  const auto files = pull("org/Model-GGUF", hub_.config());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], fs::path(root_) / "org/Model-GGUF/model-q8_0.gguf");
  EXPECT_EQ(test::read_file(files[0]), q8_);
  EXPECT_FALSE(fs::exists(files[0].string() + ".part"));
  ASSERT_EQ(hub_.file_requests().size(), 1u);  // the Hub's redirect was followed to the file host
  EXPECT_EQ(hub_.file_requests()[0].path, "/blobs/org/Model-GGUF/model-q8_0.gguf");
}

TEST_F(Pull, QuantTagAndExactFile) {
  EXPECT_EQ(test::read_file(pull("org/Model-GGUF:Q4_K_M", hub_.config()).at(0)), q4_);
  EXPECT_EQ(pull("org/Model-GGUF/model-q8_0.gguf", hub_.config()).at(0).filename(), "model-q8_0.gguf");
}

TEST_F(Pull, AMissingQuantListsTheQuants) {
  const std::string e = pull_error("org/Model-GGUF:Q5_K_M", hub_.config());
  EXPECT_NE(e.find("org/Model-GGUF has no Q5_K_M file; its quants: Q4_K_M, Q8_0"), std::string::npos) << e;
}

TEST_F(Pull, AnUnknownRepoIsNamed) {
  for (const std::string token : {"", "hf_other"}) {  // the Hub answers 401 without a token, 404 with one
    const std::string e = pull_error("org/Nothing-GGUF", hub_.config(token));
    EXPECT_NE(e.find("no model repo org/Nothing-GGUF on " + hub_.endpoint()), std::string::npos) << e;
    EXPECT_NE(e.find("set HF_TOKEN"), std::string::npos) << e;
  }
}

TEST_F(Pull, APrivateRepoAsksForHfToken) {
  hub_.add_repo("org/Private-GGUF", {{{"p-Q8_0.gguf", q8_}}, /*is_private=*/true});
  const std::string without = pull_error("org/Private-GGUF", hub_.config());
  EXPECT_NE(without.find("org/Private-GGUF is gated or private"), std::string::npos) << without;
  EXPECT_NE(without.find("(HTTP 401)"), std::string::npos) << without;
  EXPECT_NE(without.find("HF_TOKEN is not set"), std::string::npos) << without;
  const std::string wrong = pull_error("org/Private-GGUF", hub_.config("hf_wrong"));
  EXPECT_NE(wrong.find("(HTTP 403)"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("an HF_TOKEN was sent"), std::string::npos) << wrong;
}

TEST_F(Pull, TheTokenGoesToTheHubButNotToTheFileHost) {
  hub_.add_repo("org/Private-GGUF", {{{"p-Q8_0.gguf", q8_}}, /*is_private=*/true});
  const auto files = pull("org/Private-GGUF", hub_.config(test::kFakeToken));
  EXPECT_EQ(test::read_file(files.at(0)), q8_);
  ASSERT_EQ(hub_.hub_requests().size(), 2u);  // the list, then resolve
  for (const auto& seen : hub_.hub_requests()) EXPECT_EQ(seen.authorization, "Bearer hf_test_token") << seen.path;
  ASSERT_EQ(hub_.file_requests().size(), 1u);
  EXPECT_EQ(hub_.file_requests()[0].authorization, "");
}

TEST_F(Pull, ALongFileListIsReadPageByPage) {
  hub_.add_repo("org/Private-GGUF", {{{"p-Q4_K_M.gguf", q4_}, {"p-Q8_0.gguf", q8_}}, /*is_private=*/true});
  hub_.page_size = 1;  // a folder, two .gguf files, a README: four pages
  EXPECT_EQ(test::read_file(pull("org/Private-GGUF", hub_.config(test::kFakeToken)).at(0)), q8_);
  const auto asked = hub_.hub_requests();
  ASSERT_EQ(asked.size(), 5u);  // four pages, then resolve
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(asked[i].path, "/api/models/org/Private-GGUF/tree/main");
    EXPECT_EQ(asked[i].authorization, "Bearer hf_test_token");  // every page is the Hub's
  }
}

TEST_F(Pull, ADroppedConnectionKeepsThePartAndTheNextPullResumes) {
  hub_.drop_after = 200'000;
  const std::string e = pull_error("org/Model-GGUF", hub_.config());
  EXPECT_NE(e.find("dropped after 200.0 KB of model-q8_0.gguf's 500.0 KB"), std::string::npos) << e;
  EXPECT_NE(e.find("pull again to resume"), std::string::npos) << e;
  const fs::path part = fs::path(root_) / "org/Model-GGUF/model-q8_0.gguf.part";
  ASSERT_EQ(fs::file_size(part), 200'000u);
  EXPECT_EQ(cache_.files().at(0).state, "partial");

  const auto files = pull("org/Model-GGUF", hub_.config());
  EXPECT_EQ(test::read_file(files.at(0)), q8_);  // whole, and its checksum passed
  ASSERT_EQ(hub_.file_requests().size(), 2u);
  EXPECT_EQ(hub_.file_requests()[0].range, "");
  EXPECT_EQ(hub_.file_requests()[1].range, "bytes=200000-");
  EXPECT_FALSE(fs::exists(part));
}

TEST_F(Pull, AServerThatIgnoresRangeStartsTheFileOver) {
  hub_.drop_after = 123'456;
  EXPECT_NE(pull_error("org/Model-GGUF", hub_.config()), "no error");
  hub_.ignore_range = true;  // answers 200 with the whole file to the Range request
  const auto files = pull("org/Model-GGUF", hub_.config());
  EXPECT_EQ(hub_.file_requests().at(1).range, "bytes=123456-");
  EXPECT_EQ(test::read_file(files.at(0)), q8_);
}

TEST_F(Pull, AWrongChecksumMovesTheFileAsideAndLoadsNothing) {
  hub_.add_repo("org/Bad-GGUF", {{{"bad-Q8_0.gguf", q8_, std::string(64, 'a')}}});
  const std::string e = pull_error("org/Bad-GGUF", hub_.config());
  EXPECT_NE(e.find("bad-Q8_0.gguf failed its checksum"), std::string::npos) << e;
  EXPECT_NE(e.find("the Hub states " + std::string(64, 'a')), std::string::npos) << e;
  const fs::path path = fs::path(root_) / "org/Bad-GGUF/bad-Q8_0.gguf";
  EXPECT_NE(e.find(path.string() + ".corrupt"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(test::read_file(path.string() + ".corrupt"), q8_);
  EXPECT_NE(pull_error("org/Bad-GGUF", hub_.config()), "no error");  // still refused when pulled again
}

TEST_F(Pull, AMultiPartModelComesWhole) {
  const std::string a = bytes_of(70'000, 3), b = bytes_of(50'000, 4);
  hub_.add_repo("org/Split-GGUF",
                {{{"Q4_K_M/s-Q4_K_M-00002-of-00002.gguf", b}, {"Q4_K_M/s-Q4_K_M-00001-of-00002.gguf", a}}});
  const auto files = pull("org/Split-GGUF:q4_k_m", hub_.config());
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(test::read_file(files[0]), a);
  EXPECT_EQ(test::read_file(files[1]), b);
  EXPECT_EQ(files[1].filename(), "s-Q4_K_M-00002-of-00002.gguf");
}

TEST_F(Pull, ACachedModelNeedsNoHub) {
  const auto first = pull("org/Model-GGUF:Q4_K_M", hub_.config());
  const size_t requests = hub_.hub_requests().size();
  HubConfig unreachable = hub_.config();
  unreachable.endpoint = kUnreachable;
  EXPECT_EQ(pull("org/Model-GGUF:Q4_K_M", unreachable), first);
  EXPECT_EQ(pull("org/Model-GGUF/model-q4_k_m.gguf", unreachable), first);
  HubConfig offline = hub_.config();
  offline.offline = true;
  EXPECT_EQ(pull("org/Model-GGUF:q4_k_m", offline), first);
  EXPECT_EQ(hub_.hub_requests().size(), requests);
  // The default quant was never pulled: not in the cache, and the Hub is not asked.
  const std::string e = pull_error("org/Model-GGUF", offline);
  EXPECT_NE(e.find("org/Model-GGUF is not in the cache"), std::string::npos) << e;
  EXPECT_NE(e.find("HF_HUB_OFFLINE is set"), std::string::npos) << e;
}

TEST_F(Pull, ADamagedSavedListIsAskedForAgain) {
  const auto first = pull("org/Model-GGUF", hub_.config());
  std::ofstream(fs::path(root_) / "org/Model-GGUF/.files.json") << R"({"files": [{"path": 1}]})";
  EXPECT_EQ(pull("org/Model-GGUF", hub_.config()), first);
  EXPECT_EQ(hub_.file_requests().size(), 1u);  // the file was there: only the list was fetched again
  HubConfig offline = hub_.config();
  offline.offline = true;
  EXPECT_EQ(pull("org/Model-GGUF", offline), first);  // and saved again
}

TEST_F(Pull, NoNetworkSaysSoAndThatALocalFileWorks) {
  HubConfig unreachable = hub_.config();
  unreachable.endpoint = kUnreachable;
  const std::string e = pull_error("org/Model-GGUF", unreachable);
  EXPECT_NE(e.find("cannot reach " + unreachable.endpoint + ": could not connect (no network"), std::string::npos) << e;
  EXPECT_NE(e.find("--model PATH.gguf"), std::string::npos) << e;
}

TEST_F(Pull, AFailedWriteKeepsThePartForResuming) {
  const fs::path dir = fs::path(root_) / "org/Model-GGUF";
  fs::create_directories(dir);
  fs::create_symlink("/dev/full", dir / "model-q8_0.gguf.part");  // every write: no space left
  const std::string e = pull_error("org/Model-GGUF", hub_.config());
  EXPECT_NE(e.find("No space left on device"), std::string::npos) << e;
  EXPECT_NE(e.find("is kept in " + (dir / "model-q8_0.gguf.part").string() + ": pull again to resume"),
            std::string::npos) << e;
}

TEST_F(Pull, ListAndRemove) {
  pull("org/Model-GGUF", hub_.config());
  pull("org/Model-GGUF:Q4_K_M", hub_.config());
  auto files = cache_.files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].repo, "org/Model-GGUF");
  EXPECT_EQ(files[0].file, "model-q4_k_m.gguf");
  EXPECT_EQ(files[0].size, q4_.size());
  EXPECT_EQ(files[1].file, "model-q8_0.gguf");

  EXPECT_EQ(cache_.remove(*parse_model_name("org/Model-GGUF:q8_0")), std::vector<std::string>{"model-q8_0.gguf"});
  ASSERT_EQ(cache_.files().size(), 1u);
  try {
    cache_.remove(*parse_model_name("org/Model-GGUF"));  // the default quant, Q8_0, is gone
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("of org/Model-GGUF it holds org/Model-GGUF/model-q4_k_m.gguf"),
              std::string::npos) << e.what();
  }
  cache_.remove(*parse_model_name("org/Model-GGUF/model-q4_k_m.gguf"));
  EXPECT_TRUE(cache_.files().empty());
  EXPECT_FALSE(fs::exists(fs::path(root_) / "org"));  // no empty folders left behind
  EXPECT_THROW(cache_.remove(*parse_model_name("org/Model-GGUF")), std::runtime_error);
}

TEST(HubConfig, ReadsHuggingFacesVariables) {
  setenv("HF_ENDPOINT", "http://127.0.0.1:9/", 1);
  setenv("HF_TOKEN", "hf_abc", 1);
  setenv("HF_HUB_OFFLINE", "1", 1);
  const HubConfig c = HubConfig::from_environment();
  EXPECT_EQ(c.endpoint, "http://127.0.0.1:9");
  EXPECT_EQ(c.token, "hf_abc");
  EXPECT_TRUE(c.offline);
  setenv("HF_ENDPOINT", "huggingface.co", 1);
  EXPECT_THROW(HubConfig::from_environment(), std::invalid_argument);
  for (const char* v : {"HF_ENDPOINT", "HF_TOKEN", "HF_HUB_OFFLINE"}) unsetenv(v);
  const HubConfig d = HubConfig::from_environment();
  EXPECT_EQ(d.endpoint, "https://huggingface.co");
  EXPECT_EQ(d.token, "");
  EXPECT_FALSE(d.offline);
}

}  // namespace
}  // namespace nanoserve::hub
