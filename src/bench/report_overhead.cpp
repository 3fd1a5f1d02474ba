// The overhead section: what the server adds to its engine's clock, per series (mock
// engine plain, mock engine with the benchmark's logit_bias, the real engine).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/markdown.h"
#include "bench/report_sections.h"

namespace nanoserve::bench {
namespace {

struct Series {
  std::string name;
  std::vector<const Row*> rows;
};

std::vector<Series> series_of(const PhaseRows& phase) {
  std::vector<Series> out;
  auto add = [&](const std::string& name, const std::function<bool(const Row&)>& keep) {
    auto rows = rows_where(phase.requests, keep);
    if (!rows.empty()) out.push_back({name, std::move(rows)});
  };
  add("mock engine", [](const Row& r) { return r["engine"] == "mock" && r["logit_bias_entries"] == 0; });
  for (const Row& r : phase.requests)
    if (r["engine"] == "mock" && r["logit_bias_entries"] != 0) {
      add(fmt::format("mock engine + logit_bias ({} entries)", r["logit_bias_entries"].get<int>()),
          [](const Row& x) { return x["engine"] == "mock" && x["logit_bias_entries"] != 0; });
      break;
    }
  for (const Row& r : phase.requests)
    if (r["engine"] != "mock") {
      const std::string engine = r["engine"];
      add(engine + " engine" + (r["logit_bias_entries"] != 0 ? " + logit_bias" : ""),
          [engine](const Row& x) { return x["engine"] == engine; });
      break;
    }
  return out;
}

std::optional<double> percentile_of(const std::vector<const Row*>& rows, const std::string& key, double p) {
  std::vector<double> values;
  for (const Row* r : rows)
    if (auto v = number(*r, key)) values.push_back(*v);
  return percentile(std::move(values), p);
}

// Fraction of each series' requests per bin of TTFT overhead. The bins are equal on a log
// axis (overheads span microseconds to milliseconds), from the smallest value to the largest.
Chart histogram_chart(const std::vector<Series>& series) {
  double low = 1e300, high = 0;
  for (const Series& s : series)
    for (const Row* r : s.rows)
      if (const auto v = number(*r, "overhead_ttft_ms"); v && *v > 0) {
        low = std::min(low, *v);
        high = std::max(high, *v);
      }
  if (high <= 0) low = 0.01, high = 1;
  constexpr int kBinsPerDecade = 12;
  const double first_edge = std::pow(10.0, std::floor(std::log10(low) * kBinsPerDecade) / kBinsPerDecade);
  const int bins = std::max(1, static_cast<int>(std::ceil(std::log10(high / first_edge) * kBinsPerDecade + 1e-9)));
  auto edge = [&](int b) { return first_edge * std::pow(10.0, static_cast<double>(b) / kBinsPerDecade); };
  std::vector<std::vector<double>> fractions(series.size(), std::vector<double>(bins, 0));
  for (size_t i = 0; i < series.size(); ++i)
    for (const Row* r : series[i].rows) {
      const auto v = number(*r, "overhead_ttft_ms");
      if (!v || *v <= 0) continue;
      const int bin = std::clamp(static_cast<int>(std::floor(std::log10(*v / first_edge) * kBinsPerDecade)), 0, bins - 1);
      fractions[i][bin] += 1.0 / static_cast<double>(series[i].rows.size());
    }
  double top = 0;
  for (const auto& f : fractions) top = std::max(top, *std::max_element(f.begin(), f.end()));
  Chart c;
  c.file = "bench-overhead-histogram.png";
  c.alt = "Histogram of the server's overhead on TTFT";
  c.script = "set title 'What the server adds before the first token: client TTFT minus engine TTFT'\n"
             "set xlabel 'overhead on TTFT (ms, log scale)'\nset ylabel 'fraction of requests'\nset key top right\n"
             "set logscale x 10\nset format x '%g'\nset style fill transparent solid 0.45 noborder\n"
             "set xtics (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)\n" +
             fmt::format("set xrange [{:.6g}:{:.6g}]\nset yrange [0:{:.6g}]\n", edge(0), edge(bins), top * 1.4);
  std::string plot = "plot ";
  for (size_t i = 0; i < series.size(); ++i) {
    std::vector<std::string> lines;  // x, y, x from, x to, y from, y to
    for (int b = 0; b < bins; ++b)
      if (fractions[i][b] > 0)
        lines.push_back(fmt::format("{:.6g} {:.6g} {:.6g} {:.6g} 0 {:.6g}", std::sqrt(edge(b) * edge(b + 1)),
                                    fractions[i][b], edge(b), edge(b + 1), fractions[i][b]));
    const std::string name = fmt::format("h{}", i);
    c.script += datablock(name, lines);
    plot += fmt::format("{}${} using 1:2:3:4:5:6 with boxxyerror ls {} title {}", i ? ", " : "", name, i + 1,
                        quoted(fmt::format("{} ({} requests)", series[i].name, series[i].rows.size())));
  }
  c.script += plot + "\n";
  return c;
}

std::string p50_p99(const std::vector<const Row*>& rows, const std::string& key) {
  return number_text(percentile_of(rows, key, 50), 3) + " / " + number_text(percentile_of(rows, key, 99), 3);
}

}  // namespace

Section overhead_section(const SuiteRows& rows) {
  const PhaseRows& phase = rows.phase("overhead");
  const std::vector<Series> series = series_of(phase);
  if (series.empty()) return not_run("Server overhead", "overhead");
  Section s;
  s.title = "Server overhead";
  MarkdownTable t({"series", "requests", "TTFT overhead p50 / p99 (ms)", "last-token overhead p50 / p99 (ms)",
                   "client TTFT p50 (ms)"});
  for (const Series& x : series)
    t.add({x.name, std::to_string(x.rows.size()), p50_p99(x.rows, "overhead_ttft_ms"),
           p50_p99(x.rows, "overhead_total_ms"), number_text(percentile_of(x.rows, "client_ttft_ms", 50), 3)});
  s.charts = {histogram_chart(series)};
  s.markdown = "Overhead is the client's clock minus the engine's on the same request: TTFT overhead = client TTFT − "
               "engine TTFT (submit → first token); last-token overhead = the client's last chunk − the engine's last "
               "token. It holds HTTP, JSON parsing, request checks, SSE framing and the client's own parsing. The mock "
               "engine does no work and has no token delay, so its rows measure nothing but the server.\n\n" +
               t.text() + "\n" + image_markdown(s.charts.front());
  const auto mock = percentile_of(series.front().rows, "overhead_ttft_ms", 50);
  const auto mock_total = percentile_of(series.front().rows, "overhead_total_ms", 50);
  if (mock && mock_total && series.front().name == "mock engine")
    s.findings.push_back(fmt::format("The server adds {:.2f} ms before the first token and {:.2f} ms by the last "
                                     "(p50, mock engine): small beside any model's prefill.",
                                     *mock, *mock_total));
  if (series.size() > 1 && mock && series[1].name.rfind("mock engine + logit_bias", 0) == 0)
    if (const auto biased = percentile_of(series[1].rows, "overhead_ttft_ms", 50))
      s.findings.push_back(fmt::format(
          "The benchmark's logit_bias ({} entries, banning tokens that end inside a UTF-8 character) costs {:.2f} ms "
          "more per request: the server parses and checks every entry before the engine sees the request.",
          series[1].rows.front()->at("logit_bias_entries").get<int>(), *biased - *mock));
  return s;
}

}  // namespace nanoserve::bench
