// How a result is shown: the question and its inputs before the prediction; afterwards the
// prediction, the first-principles answer and the measurement side by side, every point, and
// the explanation. And the JSONL row that records it.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "lab/lab_context.h"
#include "lab/result.h"

namespace nanoserve::lab {

// 1,234,567 / 123 / 12.3 / 0.0123: whole numbers from 100 on, three significant digits below.
std::string format_number(double value);

// The question with its {name} placeholders filled in.
std::string question_text(const Experiment& e, const std::vector<std::pair<std::string, double>>& inputs);

void print_question(std::ostream& out, const Experiment& e, const std::vector<std::pair<std::string, double>>& inputs,
                    const std::vector<std::string>& notes);
void print_result(std::ostream& out, const Result& result);

// The row appended to the JSONL file.
nlohmann::ordered_json result_row(const Result& result, LabContext& lab, const std::string& server);

}  // namespace nanoserve::lab
