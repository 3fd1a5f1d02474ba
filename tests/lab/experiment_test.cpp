// The experiment files: every one built into the binary parses and its formula evaluates, and a
// malformed file is refused with its name and the field at fault.
#include "lab/experiment.h"

#include <gtest/gtest.h>

#include <set>

#include "lab/embedded_experiments.h"
#include "lab/procedure.h"

namespace nanoserve::lab {
namespace {

// The refusal's message for `text` read as experiments/x.json ("" when it was accepted).
std::string refusal(const std::string& text) {
  try {
    parse_experiment(text, "experiments/x.json");
  } catch (const ExperimentError& e) {
    return e.what();
  }
  return "";
}

// A valid file, with `field` replaced by `value` (or removed when value is null).
std::string file_with(const std::string& field, const nlohmann::json& value) {
  nlohmann::json doc = {{"id", "x"},
                        {"order", 1},
                        {"title", "T"},
                        {"question", "How long for {tokens} tokens?"},
                        {"unit", "ms"},
                        {"inputs", {"tokens", "prefill_tok_s_short"}},
                        {"measurement", {{"procedure", "ttft"}, {"tokens", {64, 256}}}},
                        {"first_principles", "tokens / prefill_tok_s_short * 1000"},
                        {"explanation", {"One.", "Two."}}};
  if (value.is_null()) doc.erase(field);
  else doc[field] = value;
  return doc.dump();
}

TEST(Experiments, EveryBuiltInFileParsesAndItsFormulaEvaluates) {
  const std::vector<Experiment> experiments = load_experiments("");
  ASSERT_EQ(experiments.size(), embedded_experiments().size());
  std::set<std::string> ids;
  for (const Experiment& e : experiments) {
    SCOPED_TRACE(e.file);
    ids.insert(e.id);
    // Sample values: every input and every variable of its procedure 2.
    std::map<std::string, double> values;
    for (const std::string& name : e.inputs) values[name] = 2;
    for (const std::string& name : find_procedure(e.procedure)->variables) values[name] = 0.5;
    const double value = e.first_principles.evaluate(values);
    EXPECT_TRUE(std::isfinite(value));
    EXPECT_GT(value, 0);
    EXPECT_FALSE(e.explanation.empty());
  }
  // The list: each of these questions has its experiment.
  for (const char* id : {"decode-bandwidth", "kv-memory", "ttft-4k", "eight-streams", "server-overhead",
                         "prefix-cache", "speculation"})
    EXPECT_TRUE(ids.contains(id)) << id;
}

TEST(Experiments, AreInTheirOrder) {
  const std::vector<Experiment> experiments = load_experiments("");
  for (size_t i = 1; i < experiments.size(); ++i) EXPECT_LE(experiments[i - 1].order, experiments[i].order);
  EXPECT_EQ(experiments.front().id, "decode-bandwidth");
}

TEST(Experiments, ParametersAreTheDefaultsWithTheFilesOverThem) {
  const Experiment e = parse_experiment(file_with("order", 3), "experiments/x.json");
  EXPECT_EQ(e.parameters["tokens"], nlohmann::json({64, 256}));
  EXPECT_EQ(e.parameters["max_tokens"], find_procedure("ttft")->defaults["max_tokens"]);
  EXPECT_EQ(e.explanation, "One.\n\nTwo.");
}

TEST(Experiments, AMalformedFileNamesTheFileAndTheField) {
  EXPECT_EQ(refusal(file_with("order", 1)), "");
  EXPECT_EQ(refusal("[1, 2"), "experiments/x.json: not a JSON object");
  EXPECT_EQ(refusal(file_with("title", nullptr)), "experiments/x.json: field \"title\": missing");
  EXPECT_EQ(refusal(file_with("unit", 3)), "experiments/x.json: field \"unit\": must be a non-empty string");
  EXPECT_EQ(refusal(file_with("colour", "red")), "experiments/x.json: field \"colour\": not a field of an experiment");
  EXPECT_EQ(refusal(file_with("id", "y")),
            "experiments/x.json: field \"id\": must be the file's name without .json (\"x\")");
  EXPECT_EQ(refusal(file_with("first_principles", "tokens / (prefill_tok_s_short")),
            "experiments/x.json: field \"first_principles\": unclosed '(' at offset 9");
  EXPECT_EQ(refusal(file_with("first_principles", "tokenz * 2")),
            "experiments/x.json: field \"first_principles\": 'tokenz' at offset 0 is neither an input (tokens, "
            "prefill_tok_s_short) nor a variable of ttft (tokens)");
  EXPECT_EQ(refusal(file_with("question", "{streams}?")),
            "experiments/x.json: field \"question\": {streams} is not one of the inputs (tokens, prefill_tok_s_short)");
  EXPECT_NE(refusal(file_with("inputs", {"tokens", "colour"})).find("field \"inputs\": unknown quantity \"colour\""),
            std::string::npos);
  EXPECT_EQ(refusal(file_with("inputs", {"tokens", "streams"})),
            "experiments/x.json: field \"inputs\": \"streams\" is not known to the procedure ttft (it supplies: tokens, "
            "long_tokens)");
  EXPECT_NE(refusal(file_with("measurement", {{"procedure", "guess"}})).find("field \"measurement.procedure\": unknown"),
            std::string::npos);
  EXPECT_EQ(refusal(file_with("measurement", {{"procedure", "ttft"}, {"tokens", 64}})),
            "experiments/x.json: field \"measurement.tokens\": must be a list of positive whole numbers");
  EXPECT_EQ(refusal(file_with("measurement", {{"procedure", "ttft"}, {"max_tokens", 0}})),
            "experiments/x.json: field \"measurement.max_tokens\": must be a positive whole number");
  EXPECT_EQ(refusal(file_with("measurement", {{"procedure", "ttft"}, {"streams", 8}})),
            "experiments/x.json: field \"measurement.streams\": not a parameter of ttft (its parameters: max_tokens, "
            "tokens)");
}

}  // namespace
}  // namespace nanoserve::lab
