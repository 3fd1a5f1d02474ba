#include "layout/include_rules.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace nanoserve::layout {
namespace fs = std::filesystem;
namespace {

std::string trimmed(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : " ") + name;
  return out.empty() ? "nothing but itself" : out;
}

bool is_source(const fs::path& file) {
  const std::string ext = file.extension().string();
  return ext == ".h" || ext == ".cpp" || ext == ".inc";
}

// The breaks among one file's quoted includes; `room` is the file's room.
void check_includes(const fs::path& src, const fs::path& file, const std::string& room, const RoomRules& rules,
                    std::vector<std::string>& breaks) {
  static const std::regex kInclude(R"re(^\s*#\s*include\s*"([^"]*)")re");
  const std::set<std::string>& allowed = rules.at(room);
  std::ifstream in(file);
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    std::smatch m;
    if (!std::regex_search(line, m, kInclude)) continue;
    const std::string target = m[1];
    const std::string where = "src/" + fs::relative(file, src).generic_string() + ":" + std::to_string(line_number) +
                              ": #include \"" + target + "\": ";
    const std::string target_room = target.substr(0, target.find('/'));
    if (target.find('/') == std::string::npos || !rules.contains(target_room))
      breaks.push_back(where + "'" + target_room + "' is not a room of src/ROOMS");
    else if (target_room != room && !allowed.contains(target_room))
      breaks.push_back(where + room + " may not include " + target_room + " (src/ROOMS allows " + room + ": " +
                       joined(allowed) + ")");
    else if (!fs::is_regular_file(src / target))
      breaks.push_back(where + "no such file in src/");
  }
}

}  // namespace

RoomRules read_room_rules(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  RoomRules rules;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    line = trimmed(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const size_t colon = line.find(':');
    const std::string room = colon == std::string::npos ? "" : trimmed(line.substr(0, colon));
    const std::string at = file.string() + ":" + std::to_string(line_number) + ": ";
    if (room.empty()) throw std::runtime_error(at + "expected `room: rooms it may include`");
    if (rules.contains(room)) throw std::runtime_error(at + room + " is listed twice");
    std::istringstream others(line.substr(colon + 1));
    std::set<std::string>& allowed = rules[room];
    for (std::string other; others >> other;) allowed.insert(other);
  }
  return rules;
}

std::vector<std::string> rule_breaks(const fs::path& src, const RoomRules& rules) {
  std::vector<std::string> breaks;
  for (const auto& [room, allowed] : rules) {
    if (!fs::exists(src / room)) breaks.push_back("src/ROOMS lists " + room + ", which src/ does not have");
    for (const std::string& other : allowed)
      if (!rules.contains(other)) breaks.push_back("src/ROOMS: " + room + " may include " + other + ", not a room");
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(src)) {
    const std::string room = entry.path().filename().string();
    if (!entry.is_directory() && !is_source(entry.path())) continue;
    if (!rules.contains(room)) {
      breaks.push_back("src/" + room + (entry.is_directory() ? "/" : "") + " is not listed in src/ROOMS");
      continue;
    }
    if (!entry.is_directory()) {
      check_includes(src, entry.path(), room, rules, breaks);
      continue;
    }
    for (const fs::directory_entry& file : fs::recursive_directory_iterator(entry.path()))
      if (file.is_regular_file() && is_source(file.path())) check_includes(src, file.path(), room, rules, breaks);
  }
  return breaks;
}

std::string first_cycle(const RoomRules& rules) {
  enum class State { kUnseen, kOnPath, kDone };
  std::map<std::string, State> state;
  std::vector<std::string> path;
  std::string cycle;
  // Depth first; a room met again while it is on the path closes a cycle.
  std::function<void(const std::string&)> visit = [&](const std::string& room) {
    state[room] = State::kOnPath;
    path.push_back(room);
    if (const auto it = rules.find(room); it != rules.end())
      for (const std::string& next : it->second) {
        if (!cycle.empty() || next == room) continue;
        if (state[next] == State::kOnPath) {
          for (auto p = std::find(path.begin(), path.end(), next); p != path.end(); ++p) cycle += *p + " -> ";
          cycle += next;
        } else if (state[next] == State::kUnseen) {
          visit(next);
        }
      }
    path.pop_back();
    state[room] = State::kDone;
  };
  for (const auto& entry : rules)
    if (cycle.empty() && state[entry.first] == State::kUnseen) visit(entry.first);
  return cycle;
}

}  // namespace nanoserve::layout
