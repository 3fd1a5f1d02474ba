// The concurrency section: N streams at once per engine: aggregate throughput per round,
// TTFT and per-stream decode, and a timeline of one round per engine.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "bench/markdown.h"
#include "bench/report_sections.h"

namespace nanoserve::bench {
namespace {

struct Round {
  std::vector<const Row*> streams;
  double wall_s = 0;        // first request sent -> last stream's end
  double tokens_per_s = 0;  // completion tokens of all streams / wall
};

struct EngineRounds {
  std::string engine;
  std::vector<Round> rounds;
  std::vector<const Row*> rows;
};

Round round_of(std::vector<const Row*> streams) {
  Round r;
  double first = 1e300, last = 0, tokens = 0;
  for (const Row* s : streams) {
    const double start = (*s)["start_offset_us"].get<double>() / 1e6;
    first = std::min(first, start);
    last = std::max(last, start + (*s)["client_end_ms"].get<double>() / 1e3);
    tokens += number(*s, "completion_tokens").value_or(static_cast<double>((*s)["text_chunks"].get<int>()));
  }
  r.streams = std::move(streams);
  r.wall_s = last - first;
  r.tokens_per_s = r.wall_s > 0 ? tokens / r.wall_s : 0;
  return r;
}

std::vector<EngineRounds> engines_of(const PhaseRows& phase) {
  std::vector<EngineRounds> out;
  std::map<std::string, std::map<int, std::vector<const Row*>>> by_engine;
  std::vector<std::string> order;
  for (const Row& r : phase.requests) {
    const std::string engine = r["engine"];
    if (!by_engine.count(engine)) order.push_back(engine);
    by_engine[engine][r["round"].get<int>()].push_back(&r);
  }
  for (const std::string& engine : order) {
    EngineRounds e{engine, {}, {}};
    for (auto& [index, streams] : by_engine[engine]) {
      e.rows.insert(e.rows.end(), streams.begin(), streams.end());
      e.rounds.push_back(round_of(streams));
    }
    out.push_back(std::move(e));
  }
  return out;
}

// The round whose throughput is the median one.
const Round& median_round(const EngineRounds& e) {
  std::vector<const Round*> sorted;
  for (const Round& r : e.rounds) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->tokens_per_s < b->tokens_per_s; });
  return *sorted[sorted.size() / 2];
}

Chart timeline_chart(const std::vector<EngineRounds>& engines, const std::string& setup) {
  Chart c;
  c.file = "bench-concurrency-timeline.png";
  c.alt = "Timelines of simultaneous streams per engine";
  c.height = 320 + 260 * static_cast<int>(engines.size());
  // One time axis for all panels, unless the rounds differ tenfold (the mock engine's).
  double shortest = 1e300, longest = 0;
  for (const EngineRounds& e : engines) {
    shortest = std::min(shortest, median_round(e).wall_s);
    longest = std::max(longest, median_round(e).wall_s);
  }
  const bool shared_axis = longest < 10 * shortest;
  c.script = fmt::format("set multiplot layout {},1 title {}\n", engines.size(),
                         quoted("Simultaneous streams, one round per engine (" + setup + ")")) +
             "set xlabel 'time since the round started (s)'\nset ylabel 'stream'\nset key top right opaque\n";
  for (size_t k = 0; k < engines.size(); ++k) {
    const Round& round = median_round(engines[k]);
    c.script += fmt::format("set xrange [0:{:.6g}]\nset yrange [-0.6:{:.1f}]\n",
                            1.02 * (shared_axis ? longest : round.wall_s), round.streams.size() - 0.4);
    std::vector<std::string> waits, chunks;
    for (const Row* s : round.streams) {
      const int stream = (*s)["stream"];
      const double start = (*s)["start_offset_us"].get<double>() / 1e6;
      const auto& arrivals = (*s)["chunk_arrival_us"];
      const double first = arrivals.empty() ? (*s)["client_end_ms"].get<double>() / 1e3 : arrivals[0].get<double>() / 1e6;
      waits.push_back(fmt::format("{:.6g} {} {:.6g} 0", start, stream, first));
      for (const auto& t : arrivals) chunks.push_back(fmt::format("{:.6g} {}", start + t.get<double>() / 1e6, stream));
    }
    const std::string w = fmt::format("w{}", k), ch = fmt::format("c{}", k);
    c.script += datablock(w, waits) + datablock(ch, chunks) +
                fmt::format("set title {}\nset ytics 1\n",
                            quoted(fmt::format("{} engine: {} streams, {:.1f} tok/s in aggregate, round of {:.1f} s",
                                               engines[k].engine, round.streams.size(), round.tokens_per_s,
                                               round.wall_s))) +
                fmt::format("plot ${} using 1:2:3:4 with vectors nohead ls 6 title 'waiting for the first token', "
                            "${} using 1:2 with points ls 1 pt 7 ps 0.5 title 'a token arrives'\n",
                            w, ch);
  }
  c.script += "unset multiplot\n";
  return c;
}

}  // namespace

Section concurrency_section(const SuiteRows& rows) {
  const PhaseRows& phase = rows.phase("concurrency");
  const std::vector<EngineRounds> engines = engines_of(phase);
  if (engines.empty()) return not_run("Concurrent streams", "concurrency");
  const std::string setup = setup_text(phase.requests.front());
  Section s;
  s.title = "Concurrent streams";
  MarkdownTable t({"engine", "streams", "aggregate (tok/s)", "round (s)", "TTFT p50 (s)", "TTFT max (s)",
                   "per-stream decode (tok/s)"});
  std::map<std::string, double> throughput;
  for (const EngineRounds& e : engines) {
    std::vector<double> rates, walls;
    for (const Round& r : e.rounds) {
      rates.push_back(r.tokens_per_s);
      walls.push_back(r.wall_s);
    }
    const auto ttft = spread_of(e.rows, "client_ttft_ms");
    throughput[e.engine] = spread(rates)->median;
    t.add({e.engine, std::to_string(e.rounds.front().streams.size()), spread_text(spread(rates), 2),
           spread_text(spread(walls), 2), number_text(ttft ? std::optional(ttft->median / 1e3) : std::nullopt, 2),
           number_text(ttft ? std::optional(ttft->max / 1e3) : std::nullopt, 2),
           spread_text(spread_of(e.rows, "client_decode_tok_s"), 2)});
  }
  s.charts = {timeline_chart(engines, setup)};
  const Row& first = phase.requests.front();
  s.markdown = fmt::format("{}; {} streams of {}-token prompts generating {} tokens each, released at the same instant; "
                           "aggregate = all streams' tokens / (first request sent → last stream done), median (min–max) "
                           "over rounds.\n\n",
                           setup, first["streams"].get<int>(), first["prompt_tokens"].get<int>(),
                           first["max_tokens"].get<int>()) +
               t.text() + "\n" + image_markdown(s.charts.front());
  if (throughput.count("sequential") && throughput.count("batch") && throughput["sequential"] > 0)
    s.findings.push_back(fmt::format("With {} simultaneous streams the batch engine delivers {:.1f} tok/s against the "
                                     "sequential engine's {:.1f}: a batching gain of {:.2f}×.",
                                     first["streams"].get<int>(), throughput["batch"], throughput["sequential"],
                                     throughput["batch"] / throughput["sequential"]));
  else if (throughput.count("sequential"))
    s.findings.push_back(fmt::format(
        "With {} simultaneous streams the sequential engine delivers {:.1f} tok/s in aggregate: the streams take turns, "
        "so the last one waits for all the others{}.",
        first["streams"].get<int>(), throughput["sequential"],
        throughput.count("batch") ? "" : " (no batch engine rows in this run: no batching gain to report)"));
  return s;
}

}  // namespace nanoserve::bench
