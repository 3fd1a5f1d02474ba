// The context section: TTFT, prefill and decode rates, and peak memory against the
// KV-cache formula, per prompt length.
#include <fmt/format.h>

#include <map>

#include "bench/markdown.h"
#include "bench/report_sections.h"

namespace nanoserve::bench {
namespace {

struct Point {
  int prompt = 0;
  std::vector<const Row*> rows;
  std::optional<Spread> client_ttft, engine_ttft, prefill, client_decode, engine_decode, gap_p50, gap_p99, peak;
  double context_size = 0, kv_bytes = 0, weight_bytes = 0;
};

std::vector<Point> points_of(const PhaseRows& phase) {
  std::map<int, std::vector<const Row*>> by_prompt;
  for (const Row& r : phase.requests) by_prompt[r["prompt_tokens"].get<int>()].push_back(&r);
  std::vector<Point> points;
  for (auto& [prompt, rows] : by_prompt) {
    Point p;
    p.prompt = prompt;
    p.rows = rows;
    p.client_ttft = spread_of(rows, "client_ttft_ms");
    p.engine_ttft = spread_of(rows, "engine_ttft_ms");
    p.prefill = spread_of(rows, "engine_prefill_tok_s");
    p.client_decode = spread_of(rows, "client_decode_tok_s");
    p.engine_decode = spread_of(rows, "engine_decode_tok_s");
    p.gap_p50 = spread_of(rows, "gap_p50_ms");
    p.gap_p99 = spread_of(rows, "gap_p99_ms");
    p.peak = spread_of(rows, "peak_memory_bytes");
    p.context_size = number(*rows[0], "context_size").value_or(0);
    p.kv_bytes = number(*rows[0], "kv_cache_bytes").value_or(0);
    p.weight_bytes = number(*rows[0], "model_file_bytes").value_or(0);
    points.push_back(std::move(p));
  }
  return points;
}

// "x median min max" for gnuplot's yerrorlines, NaN where absent; `scale` converts units.
std::string spread_columns(const std::optional<Spread>& s, double scale = 1) {
  if (!s) return "NaN NaN NaN";
  return fmt::format("{:.6g} {:.6g} {:.6g}", s->median * scale, s->min * scale, s->max * scale);
}

Chart ttft_chart(const std::vector<Point>& points, const std::string& setup) {
  std::vector<std::string> lines;
  for (const Point& p : points)
    lines.push_back(fmt::format("{} {} {}", p.prompt, spread_columns(p.client_ttft, 1e-3), spread_columns(p.engine_ttft, 1e-3)));
  Chart c;
  c.file = "bench-context-ttft.png";
  c.alt = "Time to first token against prompt length";
  c.script = datablock("d", lines) +
             "set title " + quoted("Time to first token vs prompt length (" + setup + ")") + "\n"
             "set xlabel 'prompt length (tokens, log scale)'\nset ylabel 'time to first token (s, log scale)'\n"
             "set logscale xy 2\nset logscale y 10\nset format x '%g'\nset key top left\n"
             "plot $d using 1:2:3:4 with yerrorlines ls 1 title 'client (median, min-max bars)', "
             "$d using 1:5 with points ls 2 title 'engine clock (median)'\n";
  return c;
}

Chart rates_chart(const std::vector<Point>& points, const std::string& setup) {
  // Room above the data (log axis) for the key.
  double low = 1e300, high = 0;
  for (const Point& p : points)
    for (const auto& s : {p.prefill, p.client_decode, p.engine_decode})
      if (s) {
        low = std::min(low, s->min);
        high = std::max(high, s->max);
      }
  if (high <= 0) low = 1, high = 10;
  std::vector<std::string> lines;
  for (const Point& p : points)
    lines.push_back(fmt::format("{} {} {} {}", p.prompt, spread_columns(p.prefill), spread_columns(p.client_decode),
                                spread_columns(p.engine_decode)));
  Chart c;
  c.file = "bench-context-rates.png";
  c.alt = "Prefill and decode rates against prompt length";
  c.script = datablock("d", lines) +
             "set title " + quoted("Prefill and decode rate as the context grows (" + setup + ")") + "\n"
             "set xlabel 'prompt length (tokens, log scale)'\nset ylabel 'tokens per second (log scale)'\n"
             "set logscale x 2\nset logscale y 10\nset format x '%g'\nset key top left\n" +
             fmt::format("set yrange [{:.6g}:{:.6g}]\n", low / 1.5, high * 6) +
             "plot $d using 1:2:3:4 with yerrorlines ls 1 title 'prefill (engine clock)', "
             "$d using 1:5:6:7 with yerrorlines ls 2 title 'decode (client: chunks/s)', "
             "$d using 1:8 with points ls 3 title 'decode (engine clock)'\n";
  return c;
}

Chart memory_chart(const std::vector<Point>& points, const std::string& setup) {
  double peak_max = 1e6;  // leaves room above the lines for the key
  for (const Point& p : points) peak_max = std::max({peak_max, p.peak ? p.peak->max : 0.0, p.weight_bytes + p.kv_bytes});
  std::vector<std::string> lines;
  for (const Point& p : points)
    lines.push_back(fmt::format("{} {} {:.6g} {:.6g}", p.context_size, spread_columns(p.peak, 1e-6),
                                (p.weight_bytes + p.kv_bytes) / 1e6, p.kv_bytes / 1e6));
  Chart c;
  c.file = "bench-context-memory.png";
  c.alt = "Peak memory against the KV-cache formula";
  c.script = datablock("d", lines) +
             "set title " + quoted("Peak memory vs context size (" + setup + ")") + "\n"
             "set xlabel 'context size of the server (tokens, log scale)'\nset ylabel 'memory (MB)'\n"
             "set logscale x 2\nset format x '%g'\nset key top left\n" +
             fmt::format("set yrange [0:{:.6g}]\n", 1.45 * peak_max / 1e6) +
             "plot $d using 1:2:3:4 with yerrorlines ls 1 title 'peak RSS of the server (median, min-max)', "
             "$d using 1:5 with linespoints ls 2 title 'model file + KV-cache formula', "
             "$d using 1:6 with linespoints ls 3 title 'KV cache: layers x KV heads x head dim x 2 x 2 bytes x context'\n";
  return c;
}

}  // namespace

Section context_section(const SuiteRows& rows) {
  const PhaseRows& phase = rows.phase("context");
  if (phase.requests.empty()) return not_run("Context length", "context");
  const std::vector<Point> points = points_of(phase);
  const std::string setup = setup_text(phase.requests.front());
  Section s;
  s.title = "Context length";
  MarkdownTable t({"prompt tokens", "TTFT, client (s)", "TTFT, engine (s)", "prefill (tok/s)", "decode, client (tok/s)",
                   "decode, engine (tok/s)", "gap p50 / p99 (ms)", "peak RSS (MB)", "model + KV formula (MB)"});
  for (const Point& p : points)
    t.add({std::to_string(p.prompt), spread_text(p.client_ttft, 2, 1e-3), spread_text(p.engine_ttft, 2, 1e-3),
           spread_text(p.prefill, 1), spread_text(p.client_decode, 1), spread_text(p.engine_decode, 1),
           number_text(p.gap_p50 ? std::optional(p.gap_p50->median) : std::nullopt, 1) + " / " +
               number_text(p.gap_p99 ? std::optional(p.gap_p99->median) : std::nullopt, 1),
           spread_text(p.peak, 0, 1e-6), mb_text(p.weight_bytes + p.kv_bytes)});
  s.charts = {ttft_chart(points, setup), rates_chart(points, setup), memory_chart(points, setup)};
  s.markdown = fmt::format("{}; {} requests per prompt length after a warm-up, each generating {} tokens. Figures are "
                           "medians with (min–max).\n\n",
                           setup, points.front().rows.size(), phase.requests.front()["max_tokens"].get<int>()) +
               t.text() + "\n";
  for (const Chart& c : s.charts) s.markdown += image_markdown(c);

  const Point& first = points.front();
  const Point& last = points.back();
  if (first.prefill && first.engine_decode)
    s.findings.push_back(fmt::format(
        "Prefill runs at {:.0f} tok/s on a {}-token prompt, decode at {:.1f} tok/s: a prompt token costs {:.0f}× less "
        "than a generated one, because prefill reads each weight once per chunk of up to 512 tokens while decode reads "
        "all of them for every token.",
        first.prefill->median, first.prompt, first.engine_decode->median,
        first.prefill->median / first.engine_decode->median));
  if (points.size() > 1 && first.client_ttft && last.client_ttft && first.engine_decode && last.engine_decode) {
    std::string why;
    if (first.prefill && last.prefill && last.prefill->median < 0.9 * first.prefill->median)
      why += " Prefill slows per token as the prompt grows: attention over the prompt grows with its square.";
    if (last.engine_decode->median < 0.9 * first.engine_decode->median)
      why += " Decode slows as each step reads a longer KV cache.";
    s.findings.push_back(fmt::format(
        "From {} to {} prompt tokens, TTFT grows from {:.2f} s to {:.2f} s (prefill {:.0f} → {:.0f} tok/s) and decode "
        "goes from {:.1f} to {:.1f} tok/s.{}",
        first.prompt, last.prompt, first.client_ttft->median / 1e3, last.client_ttft->median / 1e3,
        first.prefill ? first.prefill->median : 0.0, last.prefill ? last.prefill->median : 0.0,
        first.engine_decode->median, last.engine_decode->median, why));
  }
  if (last.peak)
    s.findings.push_back(fmt::format(
        "At a context of {:.0f} tokens the server peaks at {:.0f} MB: the model file ({:.0f} MB) plus the KV cache "
        "({:.1f} MB by the formula) plus {:.0f} MB of buffers, tokenizer and runtime.",
        last.context_size, last.peak->median / 1e6, last.weight_bytes / 1e6, last.kv_bytes / 1e6,
        (last.peak->median - last.weight_bytes - last.kv_bytes) / 1e6));
  return s;
}

}  // namespace nanoserve::bench
