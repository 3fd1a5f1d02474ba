#include "lab/report.h"

#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <sstream>

#include "bench/host_info.h"
#include "lab/quantities.h"

namespace nanoserve::lab {
namespace {

constexpr size_t kWidth = 100;  // the explanation is wrapped at this many columns

std::string with_thousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

// Each paragraph wrapped at kWidth columns, indented by two spaces.
std::string wrapped(const std::string& text) {
  std::string out;
  std::istringstream paragraphs(text);
  std::string paragraph;
  while (std::getline(paragraphs, paragraph)) {
    if (paragraph.empty()) {
      out += "\n";
      continue;
    }
    std::istringstream words(paragraph);
    std::string word, line;
    while (words >> word) {
      if (!line.empty() && line.size() + 1 + word.size() > kWidth - 2) {
        out += "  " + line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) out += "  " + line + "\n";
  }
  return out;
}

// A detail's value: a number as format_number writes it, a list of numbers likewise.
std::string detail_text(const nlohmann::ordered_json& value) {
  if (value.is_number()) return format_number(value.get<double>());
  if (!value.is_array()) return value.dump();
  std::string out;
  for (const auto& item : value) out += (out.empty() ? "" : ", ") + detail_text(item);
  return out;
}

void print_details(std::ostream& out, const nlohmann::ordered_json& details, int indent) {
  for (const auto& [key, value] : details.items())
    out << fmt::format("{:{}}{:<28} {}\n", "", indent, key, detail_text(value));
}

std::string ratio_text(double measured, double reference) {
  if (reference == 0) return "-";
  return format_number(measured / reference);
}

}  // namespace

std::string format_number(double value) {
  if (!std::isfinite(value)) return fmt::format("{}", value);
  if (std::fabs(value) >= 100) return with_thousands(std::llround(value));
  if (value == 0) return "0";
  return fmt::format("{:.3g}", value);
}

std::string question_text(const Experiment& e, const std::vector<std::pair<std::string, double>>& inputs) {
  std::string text = e.question;
  for (const auto& [name, value] : inputs) text = std::regex_replace(text, std::regex("\\{" + name + "\\}"), format_number(value));
  return text;
}

void print_question(std::ostream& out, const Experiment& e, const std::vector<std::pair<std::string, double>>& inputs,
                    const std::vector<std::string>& notes) {
  out << "\n== " << e.id << ": " << e.title << " ==\n\n" << wrapped(question_text(e, inputs)) << "\nWhat you know:\n";
  for (const auto& [name, value] : inputs) {
    const QuantityInfo* q = find_quantity(name);
    out << fmt::format("  {:<24} {:>14} {:<8} {}\n", name, format_number(value), q->unit, q->meaning);
  }
  for (const std::string& note : notes) out << "  note: " << note << "\n";
}

void print_result(std::ostream& out, const Result& r) {
  const Experiment& e = *r.experiment;
  out << fmt::format("\n  {:<10} {:>16} {:>18} {:>14}\n", "", "your prediction", "first principles", "measured");
  out << fmt::format("  {:<10} {:>16} {:>18} {:>14}\n", e.unit, r.prediction ? format_number(*r.prediction) : "-",
                     format_number(r.first_principles()), format_number(r.measured()));
  out << "  measured / first principles: " << ratio_text(r.measured(), r.first_principles());
  if (r.prediction) out << "    measured / your prediction: " << ratio_text(r.measured(), *r.prediction);
  out << "\n";
  if (r.points.size() > 1) {
    out << fmt::format("\n  {:<28} {:>18} {:>14} {:>8}   ({})\n", "point", "first principles", "measured", "ratio", e.unit);
    for (const PointResult& p : r.points)
      out << fmt::format("  {:<28} {:>18} {:>14} {:>8}\n", p.point.label, format_number(p.first_principles),
                         format_number(p.point.measured), ratio_text(p.point.measured, p.first_principles));
  }
  bool any_details = !r.details.empty();
  for (const PointResult& p : r.points) any_details = any_details || !p.point.details.empty();
  if (any_details) {
    out << "\n  also measured:\n";
    const bool by_point = r.points.size() > 1;
    for (const PointResult& p : r.points) {
      if (by_point && !p.point.details.empty()) out << "    " << p.point.label << "\n";
      print_details(out, p.point.details, by_point ? 6 : 4);
    }
    print_details(out, r.details, 4);
  }
  for (const std::string& note : r.measurement_notes) out << "  note: " << note << "\n";
  out << "\nWhy they differ:\n" << wrapped(e.explanation);
}

nlohmann::ordered_json result_row(const Result& r, LabContext& lab, const std::string& server) {
  const bench::HostInfo host = bench::probe_host();
  nlohmann::ordered_json inputs = nlohmann::ordered_json::object();
  for (const auto& [name, value] : r.inputs) inputs[name] = value;
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const PointResult& p : r.points)
    points.push_back({{"label", p.point.label},
                      {"variables", p.point.variables},
                      {"first_principles", p.first_principles},
                      {"measured", p.point.measured},
                      {"details", p.point.details}});
  std::vector<std::string> notes = r.plan_notes;
  notes.insert(notes.end(), r.measurement_notes.begin(), r.measurement_notes.end());
  const ModelFacts& f = lab.facts();
  return {{"experiment", r.experiment->id},
          {"time", bench::utc_timestamp()},
          {"model", f.model.name},
          {"model_file", f.model.file_name},
          {"weight_type", f.model.weight_type},
          {"host", {{"cpu", host.cpu}, {"simd", host.simd}, {"logical_cores", host.logical_cores},
                    {"physical_cores", host.physical_cores}, {"ram_bytes", host.ram_bytes}, {"git_sha", host.git_sha},
                    {"build_type", host.build_type}}},
          {"server", server},
          {"threads", lab.threads()},
          {"kv_type", kernels::kv_type_name(f.kv_type)},
          {"unit", r.experiment->unit},
          {"question", question_text(*r.experiment, r.inputs)},
          {"inputs", inputs},
          {"prediction", r.prediction ? nlohmann::ordered_json(*r.prediction) : nlohmann::ordered_json(nullptr)},
          {"first_principles", r.first_principles()},
          {"measured", r.measured()},
          {"ratio", r.first_principles() != 0 ? nlohmann::ordered_json(r.measured() / r.first_principles())
                                              : nlohmann::ordered_json(nullptr)},
          {"points", points},
          {"details", r.details},
          {"notes", notes}};
}

}  // namespace nanoserve::lab
