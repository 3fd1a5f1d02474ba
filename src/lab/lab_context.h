// One lab session: the model's facts, the servers, and the quantities measured before the
// reader predicts, each obtained once and shared by every experiment of the session.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "lab/lab_server.h"
#include "lab/model_facts.h"

namespace nanoserve::lab {

class LabContext {
 public:
  // `max_context` > 0 caps every prompt and server context (quick runs).
  LabContext(ModelFacts facts, const ServerSettings& settings, int64_t max_context, std::ostream& log);

  const ModelFacts& facts() const { return facts_; }
  Servers& servers() { return servers_; }
  std::ostream& log() { return log_; }
  int threads() const { return threads_; }
  // The longest context a request may use: the model's, capped by --max-context.
  int64_t context_limit() const { return context_limit_; }

  // The value of a quantity of the model, the machine or the probe server (quantities.h);
  // measured on first use. Throws std::invalid_argument for a procedure's quantity or an
  // unknown name.
  double quantity(const std::string& name);

  // The server the session's quantities are measured on: the batch engine with nothing that
  // skips work (no prefix cache, no speculation).
  ServerConfig probe_config() const;

 private:
  void probe_server();

  ModelFacts facts_;
  int threads_;
  int64_t context_limit_;
  std::ostream& log_;
  Servers servers_;
  std::map<std::string, double> measured_;
};

}  // namespace nanoserve::lab
