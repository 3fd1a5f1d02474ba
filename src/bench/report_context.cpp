// The context section: TTFT, prefill and decode rates, and peak memory against the
// KV-cache formula, per prompt length and KV cache type; then the q8_0 cache against F16's.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bench/markdown.h"
#include "bench/report_sections.h"

namespace nanoserve::bench {
namespace {

struct ContextPoint {
  std::string kv_type;  // "f16" where a row (written before the q8_0 cache) names none
  int prompt = 0;
  std::vector<const Row*> rows;
  std::optional<Spread> client_ttft, engine_ttft, prefill, client_decode, engine_decode, gap_p50, gap_p99, peak;
  double context_size = 0, kv_bytes = 0, weight_bytes = 0;
};

// The points in order of prompt length, each length's types in order of name (f16, q8_0).
std::vector<ContextPoint> context_points_of(const PhaseRows& phase) {
  std::map<std::pair<int, std::string>, std::vector<const Row*>> by_point;
  for (const Row& r : phase.requests)
    by_point[{r["prompt_tokens"].get<int>(), r.value("kv_type", std::string("f16"))}].push_back(&r);
  std::vector<ContextPoint> points;
  for (auto& [key, rows] : by_point) {
    ContextPoint p;
    p.prompt = key.first;
    p.kv_type = key.second;
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

// The KV cache types of the points, in order of name.
std::vector<std::string> types_of(const std::vector<ContextPoint>& points) {
  std::vector<std::string> types;
  for (const ContextPoint& p : points)
    if (std::find(types.begin(), types.end(), p.kv_type) == types.end()) types.push_back(p.kv_type);
  std::sort(types.begin(), types.end());
  return types;
}

// One gnuplot datablock per KV cache type ($t0, $t1, ...), a line per point made by `line`.
template <class Line>
std::string blocks_by_type(const std::vector<ContextPoint>& points, const std::vector<std::string>& types, Line line) {
  std::string script;
  for (size_t t = 0; t < types.size(); ++t) {
    std::vector<std::string> lines;
    for (const ContextPoint& p : points)
      if (p.kv_type == types[t]) lines.push_back(line(p));
    script += datablock(fmt::format("t{}", t), lines);
  }
  return script;
}

// gnuplot's plot clauses, one per type and series: `series` is {columns, title, style} each.
std::string plot_by_type(const std::vector<std::string>& types,
                         const std::vector<std::tuple<std::string, std::string, std::string>>& series) {
  std::string plot = "plot ";
  int style = 1;
  for (const auto& [columns, title, with] : series)
    for (size_t t = 0; t < types.size(); ++t) {
      plot += fmt::format("{}$t{} using {} with {} ls {} title {}", style > 1 ? ", " : "", t, columns, with, style,
                          quoted(title + ", " + types[t] + " KV"));
      ++style;
    }
  return plot + "\n";
}

Chart ttft_chart(const std::vector<ContextPoint>& points, const std::string& setup) {
  const auto types = types_of(points);
  Chart c;
  c.file = "bench-context-ttft.png";
  c.alt = "Time to first token against prompt length";
  c.script = blocks_by_type(points, types,
                            [](const ContextPoint& p) {
                              return fmt::format("{} {} {}", p.prompt, spread_columns(p.client_ttft, 1e-3),
                                                 spread_columns(p.engine_ttft, 1e-3));
                            }) +
             "set title " + quoted("Time to first token vs prompt length (" + setup + ")") + "\n"
             "set xlabel 'prompt length (tokens, log scale)'\nset ylabel 'time to first token (s, log scale)'\n"
             "set logscale xy 2\nset logscale y 10\nset format x '%g'\nset key top left\n" +
             plot_by_type(types, {{"1:2:3:4", "client (median, min-max)", "yerrorlines"},
                                  {"1:5", "engine clock (median)", "points"}});
  return c;
}

Chart rates_chart(const std::vector<ContextPoint>& points, const std::string& setup) {
  // Room above the data (log axis) for the key.
  double low = 1e300, high = 0;
  for (const ContextPoint& p : points)
    for (const auto& s : {p.prefill, p.client_decode, p.engine_decode})
      if (s) {
        low = std::min(low, s->min);
        high = std::max(high, s->max);
      }
  if (high <= 0) low = 1, high = 10;
  const auto types = types_of(points);
  Chart c;
  c.file = "bench-context-rates.png";
  c.alt = "Prefill and decode rates against prompt length";
  c.script = blocks_by_type(points, types,
                            [](const ContextPoint& p) {
                              return fmt::format("{} {} {} {}", p.prompt, spread_columns(p.prefill),
                                                 spread_columns(p.client_decode), spread_columns(p.engine_decode));
                            }) +
             "set title " + quoted("Prefill and decode rate as the context grows (" + setup + ")") + "\n"
             "set xlabel 'prompt length (tokens, log scale)'\nset ylabel 'tokens per second (log scale)'\n"
             "set logscale x 2\nset logscale y 10\nset format x '%g'\nset key top left\n" +
             fmt::format("set yrange [{:.6g}:{:.6g}]\n", low / 1.5, high * 12) +
             plot_by_type(types, {{"1:2:3:4", "prefill (engine clock)", "yerrorlines"},
                                  {"1:5:6:7", "decode (client: chunks/s)", "yerrorlines"}});
  return c;
}

Chart memory_chart(const std::vector<ContextPoint>& points, const std::string& setup) {
  double peak_max = 1e6;  // leaves room above the lines for the key
  for (const ContextPoint& p : points) peak_max = std::max({peak_max, p.peak ? p.peak->max : 0.0, p.weight_bytes + p.kv_bytes});
  const auto types = types_of(points);
  Chart c;
  c.file = "bench-context-memory.png";
  c.alt = "Peak memory against the KV-cache formula";
  c.script = blocks_by_type(points, types,
                            [](const ContextPoint& p) {
                              return fmt::format("{} {} {:.6g} {:.6g}", p.context_size, spread_columns(p.peak, 1e-6),
                                                 (p.weight_bytes + p.kv_bytes) / 1e6, p.kv_bytes / 1e6);
                            }) +
             "set title " + quoted("Peak memory vs context size (" + setup + ")") + "\n"
             "set xlabel 'context size of the server (tokens, log scale)'\nset ylabel 'memory (MB)'\n"
             "set logscale x 2\nset format x '%g'\nset key top left\n" +
             fmt::format("set yrange [0:{:.6g}]\n", 1.6 * peak_max / 1e6) +
             plot_by_type(types, {{"1:2:3:4", "peak RSS of the server", "yerrorlines"},
                                  {"1:5", "model file + KV-cache formula", "linespoints"},
                                  {"1:6", "KV cache by the formula", "linespoints"}});
  return c;
}

// Per prompt length, a q8_0 cache's figures against F16's: the KV formula's bytes, peak RSS,
// prefill and decode rates (medians).
MarkdownTable kv_type_table(const std::vector<ContextPoint>& points) {
  MarkdownTable t({"prompt tokens", "KV formula, q8_0 / f16", "peak RSS, q8_0 − f16 (MB)", "prefill, q8_0 / f16",
                   "decode (engine), q8_0 / f16"});
  auto ratio = [](const std::optional<Spread>& a, const std::optional<Spread>& b) {
    return a && b && b->median > 0 ? fmt::format("{:.2f}×", a->median / b->median) : std::string("–");
  };
  for (const ContextPoint& q8 : points) {
    if (q8.kv_type != "q8_0") continue;
    const auto f16 = std::find_if(points.begin(), points.end(),
                                  [&](const ContextPoint& p) { return p.kv_type == "f16" && p.prompt == q8.prompt; });
    if (f16 == points.end()) continue;
    t.add({std::to_string(q8.prompt), f16->kv_bytes > 0 ? fmt::format("{:.3f}", q8.kv_bytes / f16->kv_bytes) : "–",
           q8.peak && f16->peak ? fmt::format("{:+.0f}", (q8.peak->median - f16->peak->median) / 1e6) : "–",
           ratio(q8.prefill, f16->prefill), ratio(q8.engine_decode, f16->engine_decode)});
  }
  return t;
}

}  // namespace

Section context_section(const SuiteRows& rows) {
  const PhaseRows& phase = rows.phase("context");
  if (phase.requests.empty()) return not_run("Context length", "context");
  const std::vector<ContextPoint> points = context_points_of(phase);
  const std::string setup = setup_text(phase.requests.front());
  Section s;
  s.title = "Context length";
  MarkdownTable t({"prompt tokens", "KV cache", "TTFT, client (s)", "TTFT, engine (s)", "prefill (tok/s)",
                   "decode, client (tok/s)", "decode, engine (tok/s)", "gap p50 / p99 (ms)", "peak RSS (MB)",
                   "model + KV formula (MB)"});
  for (const ContextPoint& p : points)
    t.add({std::to_string(p.prompt), p.kv_type, spread_text(p.client_ttft, 2, 1e-3),
           spread_text(p.engine_ttft, 2, 1e-3), spread_text(p.prefill, 1), spread_text(p.client_decode, 1),
           spread_text(p.engine_decode, 1),
           number_text(p.gap_p50 ? std::optional(p.gap_p50->median) : std::nullopt, 1) + " / " +
               number_text(p.gap_p99 ? std::optional(p.gap_p99->median) : std::nullopt, 1),
           spread_text(p.peak, 0, 1e-6), mb_text(p.weight_bytes + p.kv_bytes)});
  s.charts = {ttft_chart(points, setup), rates_chart(points, setup), memory_chart(points, setup)};
  s.markdown = fmt::format("{}; {} requests per prompt length and KV cache type after a warm-up, each generating {} "
                           "tokens, a server per length and type (their order alternating from one length to the "
                           "next). Figures are medians with (min–max).\n\n",
                           setup, points.front().rows.size(), phase.requests.front()["max_tokens"].get<int>()) +
               t.text() + "\n";
  const MarkdownTable by_type = kv_type_table(points);
  if (!by_type.empty()) s.markdown += "A q8_0 KV cache against F16's, per prompt length (each length's two servers run "
                                      "one after the other, minutes apart, and the machine's speed moves between "
                                      "them; `nanoserve bench-kv` alternates steps for ratios side by side):\n\n" +
                                      by_type.text() + "\n";
  for (const Chart& c : s.charts) s.markdown += image_markdown(c);

  // The findings below follow one type of cache (the first by name: f16 where it ran).
  std::vector<ContextPoint> series;
  for (const ContextPoint& p : points)
    if (p.kv_type == types_of(points).front()) series.push_back(p);
  const ContextPoint& first = series.front();
  const ContextPoint& last = series.back();
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
  // The q8_0 cache at the longest prompt both types ran.
  for (auto q8 = points.rbegin(); q8 != points.rend(); ++q8) {
    if (q8->kv_type != "q8_0") continue;
    const auto f16 = std::find_if(points.begin(), points.end(),
                                  [&](const ContextPoint& p) { return p.kv_type == "f16" && p.prompt == q8->prompt; });
    if (f16 == points.end() || !q8->engine_decode || !f16->engine_decode || !q8->peak || !f16->peak) continue;
    s.findings.push_back(fmt::format(
        "A q8_0 KV cache at {} prompt tokens: {:.1f} MB by the formula instead of {:.1f} ({:.2f}×), a peak RSS of "
        "{:.0f} MB instead of {:.0f}, and decode at {:.1f} tok/s instead of {:.1f} ({:.2f}×): each step reads half "
        "the cache's bytes.",
        q8->prompt, q8->kv_bytes / 1e6, f16->kv_bytes / 1e6, q8->kv_bytes / f16->kv_bytes, q8->peak->median / 1e6,
        f16->peak->median / 1e6, q8->engine_decode->median, f16->engine_decode->median,
        q8->engine_decode->median / f16->engine_decode->median));
    break;
  }
  return s;
}

}  // namespace nanoserve::bench
