#include "lab/lab.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "bench/endpoint.h"
#include "bench/interrupt.h"
#include "lab/experiment.h"
#include "lab/report.h"
#include "machine/host.h"

namespace nanoserve::lab {
namespace {

std::optional<double> parse_number(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

void list(const std::vector<Experiment>& experiments, std::ostream& out) {
  out << "Experiments (nanoserve lab ID -m MODEL.gguf, or lab all):\n";
  for (const Experiment& e : experiments) out << fmt::format("  {:<18} {}\n", e.id, e.title);
}

// The reader's prediction: --predict, else asked on `in` (an empty line or the end of input: none).
std::optional<double> prediction(const LabOptions& o, const Experiment& e, std::istream& in, std::ostream& out) {
  if (const auto found = o.predict_by_id.find(e.id); found != o.predict_by_id.end()) return found->second;
  if (o.predict_all) return o.predict_all;
  if (o.no_prompt) return std::nullopt;
  for (;;) {
    out << "\nyour prediction (" << e.unit << "; empty: none): " << std::flush;
    std::string line;
    if (!std::getline(in, line) || line.find_first_not_of(" \t\r") == std::string::npos) return std::nullopt;
    if (const auto value = parse_number(line)) return value;
    out << "not a number: " << line;
  }
}

Result run_one(const Experiment& e, LabContext& lab, const LabOptions& o, std::istream& in, std::ostream& out) {
  const ProcedureInfo& info = *find_procedure(e.procedure);
  const std::unique_ptr<Procedure> procedure = info.make(lab, e.parameters);
  const std::map<std::string, double> known = procedure->known();
  Result r{.experiment = &e, .plan_notes = procedure->plan_notes()};
  for (const std::string& name : e.inputs) {
    const auto found = known.find(name);
    r.inputs.emplace_back(name, found != known.end() ? found->second : lab.quantity(name));
  }
  print_question(out, e, r.inputs, r.plan_notes);
  r.prediction = prediction(o, e, in, out);
  lab.log() << "  measuring: " << info.summary << "\n";
  Measurement m = procedure->measure(lab);
  for (Point& point : m.points) {
    std::map<std::string, double> values(r.inputs.begin(), r.inputs.end());
    for (const auto& [name, value] : point.variables) values[name] = value;
    double first_principles = 0;
    try {
      first_principles = e.first_principles.evaluate(values);
    } catch (const ExpressionError& error) {
      throw std::runtime_error(e.file + ": field \"first_principles\": " + error.what());
    }
    r.points.push_back({std::move(point), first_principles});
  }
  r.details = std::move(m.details);
  r.measurement_notes = std::move(m.notes);
  return r;
}

void append_row(const std::string& path, const nlohmann::ordered_json& row) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream file(path, std::ios::app);
  file << row.dump() << "\n";
  if (!file) throw std::runtime_error("cannot write " + path);
}

}  // namespace

void add_prediction(LabOptions& options, const std::string& argument) {
  const size_t eq = argument.find('=');
  const std::string value_text = eq == std::string::npos ? argument : argument.substr(eq + 1);
  const std::optional<double> value = parse_number(value_text);
  if (!value) throw std::invalid_argument("--predict takes VALUE or EXPERIMENT=VALUE, not \"" + argument + "\"");
  if (eq == std::string::npos) options.predict_all = value;
  else options.predict_by_id[argument.substr(0, eq)] = *value;
}

int run_lab(const LabOptions& o, std::istream& in, std::ostream& out, std::ostream& log) {
  const std::vector<Experiment> all = load_experiments(o.experiments_dir);
  if (o.experiments.empty()) {
    list(all, out);
    return 0;
  }
  std::vector<const Experiment*> chosen;
  for (const std::string& id : o.experiments) {
    if (id == "all") {
      for (const Experiment& e : all) chosen.push_back(&e);
      continue;
    }
    const auto found = std::find_if(all.begin(), all.end(), [&](const Experiment& e) { return e.id == id; });
    if (found == all.end()) {
      log << "nanoserve lab: no experiment \"" << id << "\"\n";
      list(all, log);
      return 2;
    }
    chosen.push_back(&*found);
  }
  for (const auto& [id, unused] : o.predict_by_id)
    if (std::none_of(all.begin(), all.end(), [&](const Experiment& e) { return e.id == id; })) {
      log << "nanoserve lab: --predict names no experiment \"" << id << "\"\n";
      list(all, log);
      return 2;
    }
  if (o.model_path.empty()) {
    log << "nanoserve lab: give the model the experiments run: -m MODEL.gguf (with --url: the file that server serves)\n";
    return 2;
  }
  if (!o.url.empty()) {
    try {
      bench::parse_endpoint(o.url);
    } catch (const std::invalid_argument& e) {
      log << "nanoserve lab: --url: " << e.what() << "\n";
      return 2;
    }
  }
  bench::install_interrupt_handlers();
  const int threads = o.threads > 0 ? o.threads : machine::physical_cores();
  LabContext lab(read_model_facts(o.model_path, o.kv_type),
                 {.model_path = o.model_path, .threads = threads, .kv_type = o.kv_type, .url = o.url, .api_key = o.api_key},
                 o.max_context, log);
  const std::string server = o.url.empty() ? "started by the lab" : o.url;
  int status = 0;
  for (const Experiment* e : chosen) {
    if (bench::interrupted()) return 130;
    try {
      const Result result = run_one(*e, lab, o, in, out);
      print_result(out, result);
      append_row(o.out_path, result_row(result, lab, server));
      out << "\n  (row appended to " << o.out_path << ")\n" << std::flush;
    } catch (const std::exception& error) {
      if (bench::interrupted()) return 130;
      log << "nanoserve lab: " << e->id << " failed: " << error.what() << "\n";
      status = 1;
    }
  }
  return status;
}

}  // namespace nanoserve::lab
