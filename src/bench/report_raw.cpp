// The raw section: the same engine in-process and served, per ABBA pair; what serving
// costs is the per-pair difference (served − in-process).
#include <fmt/format.h>

#include <map>

#include "bench/markdown.h"
#include "bench/report_sections.h"

namespace nanoserve::bench {
namespace {

struct Pair {
  int index = 0;
  const Row* served = nullptr;
  const Row* in_process = nullptr;
  std::string order;
};

std::vector<Pair> pairs_of(const PhaseRows& phase) {
  std::map<int, Pair> by_index;
  for (const Row& r : phase.requests) {
    Pair& p = by_index[r["pair"].get<int>()];
    p.index = r["pair"];
    p.order = r["order"];
    (r["target"] == "in-process" ? p.in_process : p.served) = &r;
  }
  std::vector<Pair> out;
  for (auto& [i, p] : by_index)
    if (p.served && p.in_process) out.push_back(p);
  return out;
}

std::optional<double> difference(const Pair& p, const std::string& key) {
  const auto served = number(*p.served, key), in_process = number(*p.in_process, key);
  if (!served || !in_process) return std::nullopt;
  return *served - *in_process;
}

std::optional<Spread> difference_spread(const std::vector<Pair>& pairs, const std::string& key) {
  std::vector<double> values;
  for (const Pair& p : pairs)
    if (auto d = difference(p, key)) values.push_back(*d);
  return spread(std::move(values));
}

std::string column(const Row* row, const std::string& key) {
  const auto v = number(*row, key);
  return v ? fmt::format("{:.6g}", *v) : "NaN";
}

Chart pairs_chart(const std::vector<Pair>& pairs, const std::string& setup) {
  std::vector<std::string> lines;
  for (const Pair& p : pairs) {
    const auto ttft = difference(p, "client_ttft_ms");
    lines.push_back(fmt::format("{} {} {} {} {}", p.index + 1, column(p.served, "client_decode_tok_s"),
                                column(p.in_process, "client_decode_tok_s"), ttft ? fmt::format("{:.6g}", *ttft) : "NaN",
                                p.order == "served first" ? 0 : 1));
  }
  Chart c;
  c.file = "bench-raw-pairs.png";
  c.alt = "In-process engine vs served, per ABBA pair";
  c.height = 720;
  c.script = datablock("d", lines) +
             "set multiplot layout 2,1 title " +
             quoted("Same engine, in-process vs behind the HTTP server, ABBA pairs (" + setup + ")") + "\n"
             "set xlabel 'pair (odd: served first, even: in-process first)'\nset xtics 1\n" +
             fmt::format("set xrange [0.4:{}.6]\n", pairs.size()) +
             "set ylabel 'decode (tok/s, client clock)'\nset key bottom right\n"
             "plot $d using 1:2 with linespoints ls 1 title 'served (HTTP, SSE)', "
             "$d using 1:3 with linespoints ls 2 title 'in-process (Engine interface)'\n"
             "set ylabel 'TTFT difference (ms)'\nset key top right\nset style fill solid 0.6\nset boxwidth 0.6\n"
             "plot $d using 1:4 with boxes ls 1 title 'served minus in-process TTFT', 0 with lines ls 6 notitle\n"
             "unset multiplot\n";
  return c;
}

}  // namespace

Section raw_section(const SuiteRows& rows) {
  const PhaseRows& phase = rows.phase("raw");
  const std::vector<Pair> pairs = pairs_of(phase);
  if (pairs.empty()) return not_run("In-process vs served (raw)", "raw");
  const std::string setup = setup_text(phase.requests.front());
  Section s;
  s.title = "In-process vs served (raw)";
  MarkdownTable arms({"arm", "TTFT (ms)", "decode (tok/s)", "gap p50 (ms)", "gap p99 (ms)"});
  for (const char* target : {"in-process", "served"}) {
    const auto rows_of_arm = rows_where(phase.requests, [&](const Row& r) { return r["target"] == target; });
    arms.add({target, spread_text(spread_of(rows_of_arm, "client_ttft_ms"), 1),
              spread_text(spread_of(rows_of_arm, "client_decode_tok_s"), 2),
              spread_text(spread_of(rows_of_arm, "gap_p50_ms"), 2), spread_text(spread_of(rows_of_arm, "gap_p99_ms"), 2)});
  }
  MarkdownTable diffs({"served − in-process, per pair", "median", "min", "max"});
  const auto add_diff = [&](const char* name, const char* key, int decimals) {
    const auto d = difference_spread(pairs, key);
    if (!d) return;
    diffs.add({name, fmt::format("{:+.{}f}", d->median, decimals), fmt::format("{:+.{}f}", d->min, decimals),
               fmt::format("{:+.{}f}", d->max, decimals)});
  };
  add_diff("TTFT (ms)", "client_ttft_ms", 2);
  add_diff("decode (tok/s)", "client_decode_tok_s", 3);
  add_diff("gap p50 (ms)", "gap_p50_ms", 3);
  add_diff("gap p99 (ms)", "gap_p99_ms", 3);
  s.charts = {pairs_chart(pairs, setup)};
  const Row& first = phase.requests.front();
  s.markdown = fmt::format("{}; {} ABBA pairs of {}-token prompts generating {} tokens. Both arms are timed the same "
                           "way: clock started before the request leaves, each piece of text stamped as it arrives.\n\n",
                           setup, pairs.size(), first["prompt_tokens"].get<int>(), first["max_tokens"].get<int>()) +
               arms.text() + "\n" + diffs.text() + "\n" + image_markdown(s.charts.front());
  const auto ttft = difference_spread(pairs, "client_ttft_ms");
  const auto decode = difference_spread(pairs, "client_decode_tok_s");
  const auto in_process_decode =
      spread_of(rows_where(phase.requests, [](const Row& r) { return r["target"] == "in-process"; }), "client_decode_tok_s");
  if (ttft && decode && in_process_decode && in_process_decode->median > 0)
    s.findings.push_back(fmt::format(
        "Serving over HTTP changes TTFT by {:+.2f} ms (per pair {:+.1f} to {:+.1f}) and decode by {:+.2f}% (median of {} "
        "ABBA pairs; a per-pair range wider than the median is the machine's own variation).",
        ttft->median, ttft->min, ttft->max, 100 * decode->median / in_process_decode->median, pairs.size()));
  return s;
}

}  // namespace nanoserve::bench
