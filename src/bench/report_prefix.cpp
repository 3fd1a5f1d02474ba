// The prefix section: time to first token of each case against the cold one, in decode steps
// too (a warm request should cost about one step), and the streams that share a system prompt
// with the cache on and off (the slowest stream's TTFT per round).
#include <fmt/format.h>

#include <map>

#include "bench/markdown.h"
#include "bench/report_sections.h"

namespace nanoserve::bench {
namespace {

const std::vector<std::pair<std::string, std::string>> kCases = {
    {"cold", "conversation, cold"},
    {"followup", "its follow-up (+ new tokens)"},
    {"resend", "the follow-up resent"},
    {"restart_cold", "long prompt, cold (--cache-dir)"},
    {"restart_warm", "the same after a restart"},
};

std::optional<double> median_ttft(const std::vector<const Row*>& rows) {
  const auto s = spread_of(rows, "client_ttft_ms");
  return s ? std::optional(s->median) : std::nullopt;
}

// Per round of shared streams: the slowest stream's TTFT.
std::optional<Spread> slowest_per_round(const PhaseRows& phase, const std::string& cache) {
  std::map<int, double> slowest;
  for (const Row& r : phase.requests)
    if (r["case"] == "shared" && r.value("cache", "") == cache)
      if (const auto ttft = number(r, "client_ttft_ms")) {
        double& s = slowest[r["repeat"].get<int>()];
        s = std::max(s, *ttft);
      }
  std::vector<double> values;
  for (const auto& [round, v] : slowest) values.push_back(v);
  return spread(std::move(values));
}

std::string ratio_text(std::optional<double> a, std::optional<double> b) {
  return a && b && *b > 0 ? fmt::format("{:.1f}×", *a / *b) : "—";
}

}  // namespace

Section prefix_section(const SuiteRows& rows) {
  const PhaseRows& phase = rows.phase("prefix");
  if (phase.requests.empty()) return not_run("Prefix cache", "prefix");
  Section s;
  s.title = "Prefix cache";
  std::map<std::string, std::vector<const Row*>> by_case;
  for (const Row& r : phase.requests) by_case[r["case"].get<std::string>()].push_back(&r);
  // One decode step, from the cold requests' own decode rate.
  const auto decode = spread_of(by_case["cold"], "client_decode_tok_s");
  const std::optional<double> step_ms =
      decode && decode->median > 0 ? std::optional(1e3 / decode->median) : std::nullopt;

  MarkdownTable t({"case", "prompt tokens", "TTFT (ms)", "decode steps", "cold ÷ this"});
  std::vector<std::string> bars;
  for (const auto& [key, label] : kCases) {
    const auto& case_rows = by_case[key];
    if (case_rows.empty()) continue;
    const std::optional<double> ttft = median_ttft(case_rows);
    const std::string cold_key = key.starts_with("restart") ? "restart_cold" : "cold";
    t.add({label, std::to_string((*case_rows.front())["prompt_tokens"].get<int>()),
           spread_text(spread_of(case_rows, "client_ttft_ms"), 1),
           ttft && step_ms ? fmt::format("{:.1f}", *ttft / *step_ms) : "—",
           key == cold_key ? "1" : ratio_text(median_ttft(by_case[cold_key]), ttft)});
    bars.push_back(fmt::format("{} \"{}\" {:.6g}", bars.size(), label, ttft.value_or(NAN)));
  }
  for (const std::string cache : {"on", "off"}) {
    const auto slowest = slowest_per_round(phase, cache);
    if (!slowest) continue;
    const std::string label = "shared system prompt, slowest stream, cache " + cache;
    int prompt = 0;
    for (const Row* r : by_case["shared"]) prompt = (*r)["prompt_tokens"].get<int>();
    t.add({label, std::to_string(prompt), spread_text(slowest, 1),
           step_ms ? fmt::format("{:.1f}", slowest->median / *step_ms) : "—", "—"});
    bars.push_back(fmt::format("{} \"{}\" {:.6g}", bars.size(), "shared, cache " + cache, slowest->median));
  }
  Chart c;
  c.file = "bench-prefix-ttft.png";
  c.alt = "Time to first token, cold and warm";
  c.script = datablock("d", bars) + "set title " +
             quoted("Time to first token, median (" + setup_text(phase.requests.front()) + ")") +
             "\nset ylabel 'TTFT (ms, log scale)'\nset logscale y\nset style fill solid 0.6\nset boxwidth 0.6\n"
             "unset key\nset bmargin 8\nset xtics rotate by -25\nset grid ytics\n"
             "plot $d using 1:3:xtic(2) with boxes ls 1 notitle\n";
  s.charts = {c};
  s.markdown = fmt::format("{}; medians (min–max) over repeats; a decode step is {} ms (the cold requests' decode "
                           "rate).\n\n",
                           setup_text(phase.requests.front()), number_text(step_ms, 1)) +
               t.text() + "\n" + image_markdown(c);

  const auto cold = median_ttft(by_case["cold"]), resend = median_ttft(by_case["resend"]),
             followup = median_ttft(by_case["followup"]);
  if (cold && resend && step_ms)
    s.findings.push_back(fmt::format("Resending a {}-token conversation: first token after {:.0f} ms ({:.1f} decode "
                                     "steps), {:.0f}× sooner than cold ({:.0f} ms); its follow-up {:.0f}× sooner.",
                                     (*by_case["resend"].front())["prompt_tokens"].get<int>(), *resend,
                                     *resend / *step_ms, *cold / *resend, *cold, followup ? *cold / *followup : 0.0));
  const auto restart_cold = median_ttft(by_case["restart_cold"]), restart_warm = median_ttft(by_case["restart_warm"]);
  if (restart_cold && restart_warm)
    s.findings.push_back(fmt::format("After a restart with --cache-dir, a {}-token prompt's first token took {:.0f}% of "
                                     "its cold time.",
                                     (*by_case["restart_warm"].front())["prompt_tokens"].get<int>(),
                                     100 * *restart_warm / *restart_cold));
  const auto on = slowest_per_round(phase, "on"), off = slowest_per_round(phase, "off");
  if (on && off && off->median > 0)
    s.findings.push_back(fmt::format("Streams sharing a system prompt: the slowest first token took {:.2f}× as long with "
                                     "the prefix cache as without it.",
                                     on->median / off->median));
  return s;
}

}  // namespace nanoserve::bench
