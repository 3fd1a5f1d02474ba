// The rules of src/ROOMS (which rooms each room of src/ may include) and a check of a source
// tree against them.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace nanoserve::layout {

// Room (a folder of src/, or a file at its top such as main.cpp) → the rooms it may include.
using RoomRules = std::map<std::string, std::set<std::string>>;

// Reads a ROOMS file: `room: other other ...` per line, `#` starts a comment. Throws
// std::runtime_error naming the line when one has no colon or repeats a room.
RoomRules read_room_rules(const std::filesystem::path& file);

// Every break of the rules in the tree under `src`, one message each: a folder the rules do
// not list, a room the rules name that `src` does not have, and each quoted #include of a
// .h, .cpp or .inc file that names a room not allowed, an unknown room or a missing file.
std::vector<std::string> rule_breaks(const std::filesystem::path& src, const RoomRules& rules);

// The rooms of a chain that leads back to its first one ("a -> b -> a"); empty when none does.
std::string first_cycle(const RoomRules& rules);

}  // namespace nanoserve::layout
