#include "lab/experiment.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "lab/embedded_experiments.h"
#include "lab/procedure.h"
#include "lab/quantities.h"

namespace nanoserve::lab {
namespace {

using nlohmann::json;

const std::set<std::string> kFields = {"id",     "order",       "title",            "question",   "unit",
                                       "inputs", "measurement", "first_principles", "explanation"};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

class FileReader {
 public:
  FileReader(const json& doc, const std::string& file) : doc_(doc), file_(file) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw ExperimentError(file_ + ": field \"" + field + "\": " + what);
  }

  const json& field(const std::string& name) const {
    if (!doc_.contains(name)) fail(name, "missing");
    return doc_.at(name);
  }

  std::string string(const std::string& name) const {
    const json& value = field(name);
    if (!value.is_string() || value.get<std::string>().empty()) fail(name, "must be a non-empty string");
    return value.get<std::string>();
  }

  // A string, or a list of strings (paragraphs, joined by blank lines).
  std::string text(const std::string& name) const {
    const json& value = field(name);
    if (value.is_string()) return value.get<std::string>();
    if (!value.is_array() || value.empty()) fail(name, "must be a string or a list of strings");
    std::string out;
    for (const json& paragraph : value) {
      if (!paragraph.is_string()) fail(name, "must be a string or a list of strings");
      out += (out.empty() ? "" : "\n\n") + paragraph.get<std::string>();
    }
    return out;
  }

 private:
  const json& doc_;
  const std::string& file_;
};

// Whether a file's value may stand for a parameter whose default is `like`.
bool same_kind(const json& value, const json& like) {
  if (like.is_number()) return value.is_number();
  if (like.is_string()) return value.is_string();
  if (like.is_array()) {
    return value.is_array() && !value.empty() &&
           std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_number_integer() && v > 0; });
  }
  return false;
}

void read_measurement(const FileReader& r, Experiment& e) {
  const json& m = r.field("measurement");
  if (!m.is_object()) r.fail("measurement", "must be an object with a \"procedure\"");
  if (!m.contains("procedure") || !m["procedure"].is_string())
    r.fail("measurement.procedure", "missing (a procedure's name)");
  e.procedure = m["procedure"].get<std::string>();
  const ProcedureInfo* info = find_procedure(e.procedure);
  if (!info) {
    std::vector<std::string> names;
    for (const ProcedureInfo& p : procedure_infos()) names.push_back(p.name);
    r.fail("measurement.procedure", "unknown procedure \"" + e.procedure + "\" (known: " + joined(names) + ")");
  }
  e.parameters = info->defaults;
  for (const auto& [key, value] : m.items()) {
    if (key == "procedure") continue;
    const std::string field = "measurement." + key;
    if (!info->defaults.contains(key)) {
      std::vector<std::string> names;
      for (const auto& [name, unused] : info->defaults.items()) names.push_back(name);
      r.fail(field, "not a parameter of " + e.procedure + " (its parameters: " + joined(names) + ")");
    }
    const json& like = info->defaults[key];
    if (!same_kind(value, like))
      r.fail(field, std::string("must be ") +
                        (like.is_array() ? "a list of positive whole numbers" : like.is_string() ? "a string" : "a number"));
    if (like.is_number_integer() && (!value.is_number_integer() || value.get<int64_t>() <= 0))
      r.fail(field, "must be a positive whole number");
    e.parameters[key] = value;
  }
}

void read_inputs(const FileReader& r, Experiment& e) {
  const json& inputs = r.field("inputs");
  if (!inputs.is_array()) r.fail("inputs", "must be a list of quantity names");
  const ProcedureInfo& procedure = *find_procedure(e.procedure);
  for (const json& name : inputs) {
    if (!name.is_string()) r.fail("inputs", "must be a list of quantity names");
    const std::string n = name.get<std::string>();
    const QuantityInfo* q = find_quantity(n);
    if (!q) {
      std::vector<std::string> names;
      for (const QuantityInfo& known : quantity_infos()) names.push_back(known.name);
      r.fail("inputs", "unknown quantity \"" + n + "\" (known: " + joined(names) + ")");
    }
    const auto& supplied = procedure.supplies;
    if (q->source == QuantitySource::Procedure && std::find(supplied.begin(), supplied.end(), n) == supplied.end())
      r.fail("inputs", "\"" + n + "\" is not known to the procedure " + e.procedure + " (it supplies: " +
                           joined(supplied) + ")");
    e.inputs.push_back(n);
  }
}

void read_formula(const FileReader& r, Experiment& e) {
  const std::string text = r.string("first_principles");
  try {
    e.first_principles = Expression::parse(text);
  } catch (const ExpressionError& error) {
    r.fail("first_principles", error.what());
  }
  const std::vector<std::string>& variables = find_procedure(e.procedure)->variables;
  for (const Expression::Name& n : e.first_principles.names()) {
    const bool input = std::find(e.inputs.begin(), e.inputs.end(), n.name) != e.inputs.end();
    const bool variable = std::find(variables.begin(), variables.end(), n.name) != variables.end();
    if (!input && !variable)
      r.fail("first_principles", "'" + n.name + "' at offset " + std::to_string(n.offset) +
                                     " is neither an input (" + joined(e.inputs) + ") nor a variable of " +
                                     e.procedure + (variables.empty() ? " (it has none)" : " (" + joined(variables) + ")"));
  }
}

void check_placeholders(const FileReader& r, const Experiment& e) {
  static const std::regex placeholder(R"(\{([^}]*)\})");
  for (std::sregex_iterator it(e.question.begin(), e.question.end(), placeholder), end; it != end; ++it) {
    const std::string name = (*it)[1];
    if (std::find(e.inputs.begin(), e.inputs.end(), name) == e.inputs.end())
      r.fail("question", "{" + name + "} is not one of the inputs (" + joined(e.inputs) + ")");
  }
}

std::string stem(const std::string& file) { return std::filesystem::path(file).stem().string(); }

}  // namespace

Experiment parse_experiment(std::string_view text, const std::string& file) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw ExperimentError(file + ": not a JSON object");
  for (const auto& [key, unused] : doc.items())
    if (!kFields.contains(key)) FileReader(doc, file).fail(key, "not a field of an experiment");
  const FileReader r(doc, file);
  Experiment e;
  e.file = file;
  e.id = r.string("id");
  if (!std::regex_match(e.id, std::regex("[a-z0-9]+(-[a-z0-9]+)*")))
    r.fail("id", "must be lowercase words joined by '-'");
  if (e.id != stem(file)) r.fail("id", "must be the file's name without .json (\"" + stem(file) + "\")");
  if (!r.field("order").is_number_integer()) r.fail("order", "must be a whole number");
  e.order = r.field("order").get<int>();
  e.title = r.string("title");
  e.question = r.string("question");
  e.unit = r.string("unit");
  read_measurement(r, e);
  read_inputs(r, e);
  read_formula(r, e);
  check_placeholders(r, e);
  e.explanation = r.text("explanation");
  return e;
}

std::vector<Experiment> load_experiments(const std::string& dir) {
  std::vector<Experiment> experiments;
  if (dir.empty()) {
    for (const EmbeddedFile& f : embedded_experiments())
      experiments.push_back(parse_experiment(f.text, "experiments/" + std::string(f.name)));
  } else {
    if (!std::filesystem::is_directory(dir)) throw ExperimentError(dir + ": not a folder of experiment files");
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".json") continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      experiments.push_back(parse_experiment(text.str(), entry.path().string()));
    }
  }
  std::sort(experiments.begin(), experiments.end(),
            [](const Experiment& a, const Experiment& b) { return std::tie(a.order, a.id) < std::tie(b.order, b.id); });
  return experiments;
}

}  // namespace nanoserve::lab
