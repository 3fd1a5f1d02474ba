// src/ROOMS says which rooms (folders of src/) each room may include: every quoted include of
// src/ keeps to it and names a file that exists, every folder of src/ is listed, and the
// rooms' dependencies point down (no cycles).
#include "layout/include_rules.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "support/build_paths.h"

namespace nanoserve::layout {
namespace {

namespace fs = std::filesystem;

const fs::path kSrc = fs::path(test::kBuildSourceDir) / "src";

TEST(IncludeRules, EveryIncludeOfSrcKeepsToRooms) {
  const RoomRules rules = read_room_rules(kSrc / "ROOMS");
  for (const std::string& rule_break : rule_breaks(kSrc, rules)) ADD_FAILURE() << rule_break;
}

TEST(IncludeRules, RoomsDependOnRoomsBelowThem) {
  EXPECT_EQ(first_cycle(read_room_rules(kSrc / "ROOMS")), "");
}

// A small tree with one break of each kind, so that the check above is known to find them.
class IncludeRulesOnATree : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(root_); }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  const fs::path root_ = fs::temp_directory_path() / ("nanoserve-layout-" + std::to_string(getpid()));
};

TEST_F(IncludeRulesOnATree, NamesTheFileTheLineAndTheInclude) {
  write("ROOMS", "# comment\nlow:\nhigh: low  # may include low\nmain.cpp: high\n");
  write("low/a.h", "#pragma once\n#include <vector>\n#include \"high/b.h\"\n");
  write("high/b.h", "#include \"low/a.h\"\n  #  include \"low/missing.h\"\n#include \"other/c.h\"\n#include \"b.h\"\n");
  write("main.cpp", "#include \"high/b.h\"\n#include \"low/a.h\"\n");
  write("stray/d.cpp", "");
  const std::vector<std::string> breaks = rule_breaks(root_, read_room_rules(root_ / "ROOMS"));
  const std::vector<std::string> expected = {
      "src/high/b.h:2: #include \"low/missing.h\": no such file in src/",
      "src/high/b.h:3: #include \"other/c.h\": 'other' is not a room of src/ROOMS",
      "src/high/b.h:4: #include \"b.h\": 'b.h' is not a room of src/ROOMS",
      "src/low/a.h:3: #include \"high/b.h\": low may not include high (src/ROOMS allows low: nothing but itself)",
      "src/main.cpp:2: #include \"low/a.h\": main.cpp may not include low (src/ROOMS allows main.cpp: high)",
      "src/stray/ is not listed in src/ROOMS",
  };
  EXPECT_EQ(std::multiset(breaks.begin(), breaks.end()), std::multiset(expected.begin(), expected.end()));
}

TEST_F(IncludeRulesOnATree, FindsRoomsThatDoNotExistAndCycles) {
  write("ROOMS", "a: b\nb: c\nc: a\ngone:\n");
  for (const char* room : {"a", "b", "c"}) fs::create_directories(root_ / room);
  const RoomRules rules = read_room_rules(root_ / "ROOMS");
  EXPECT_EQ(rule_breaks(root_, rules), std::vector<std::string>{"src/ROOMS lists gone, which src/ does not have"});
  EXPECT_EQ(first_cycle(rules), "a -> b -> c -> a");
}

TEST_F(IncludeRulesOnATree, RejectsAMalformedLine) {
  write("ROOMS", "a:\na b\n");
  EXPECT_THROW(read_room_rules(root_ / "ROOMS"), std::runtime_error);
}

}  // namespace
}  // namespace nanoserve::layout
