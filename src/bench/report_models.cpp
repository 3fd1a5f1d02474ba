// The models section: per synthesized model, decode rate, TTFT on a long prompt, peak
// memory, and achieved GB/s of weights (decode tok/s × bytes one decode step reads)
// against this machine's read bandwidth measured around that model's decode requests.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "bench/markdown.h"
#include "bench/report_sections.h"

namespace nanoserve::bench {
namespace {

struct ModelPoint {
  std::string spec, weight_type;
  double file_bytes = 0, step_bytes = 0, bandwidth = 0;
  int ttft_prompt = 0;
  std::optional<Spread> decode, ttft, prefill, peak;
  std::optional<double> gb_s() const { return decode ? std::optional(decode->median * step_bytes / 1e9) : std::nullopt; }
};

// Bytes one decode step reads: every weight matrix, and the KV cache at the mean position.
double step_bytes_of(const Row& r) {
  const double mean_position = r["prompt_tokens"].get<double>() + r["max_tokens"].get<double>() / 2;
  return r["weight_bytes_per_token"].get<double>() + r["kv_bytes_per_position"].get<double>() * mean_position;
}

std::vector<ModelPoint> model_points_of(const PhaseRows& phase) {
  std::map<std::string, std::vector<const Row*>> by_spec;
  std::vector<std::string> order;
  for (const Row& r : phase.requests) {
    if (!by_spec.count(r["model_spec"])) order.push_back(r["model_spec"]);
    by_spec[r["model_spec"]].push_back(&r);
  }
  std::vector<ModelPoint> points;
  for (const std::string& spec : order) {
    const auto& rows = by_spec[spec];
    std::vector<const Row*> decode, ttft;
    for (const Row* r : rows) ((*r)["measure"] == "decode" ? decode : ttft).push_back(r);
    ModelPoint p;
    p.spec = spec;
    p.weight_type = (*rows[0])["weight_type"].is_string() ? (*rows[0])["weight_type"].get<std::string>() : "";
    p.file_bytes = (*rows[0])["model_file_bytes"].get<double>();
    p.bandwidth = (*rows[0])["read_bandwidth_bytes_s"].get<double>();
    if (!decode.empty()) p.step_bytes = step_bytes_of(*decode[0]);
    if (!ttft.empty()) p.ttft_prompt = (*ttft[0])["prompt_tokens"].get<int>();
    p.decode = spread_of(decode, "engine_decode_tok_s");
    p.ttft = spread_of(ttft, "client_ttft_ms");
    p.prefill = spread_of(ttft, "engine_prefill_tok_s");
    p.peak = spread_of(rows, "peak_memory_bytes");
    points.push_back(std::move(p));
  }
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.step_bytes < b.step_bytes; });
  return points;
}

Chart decode_chart(const std::vector<ModelPoint>& points, const std::string& threads) {
  std::vector<std::string> lines;
  double x_max = 0, y_max = 0;
  for (const ModelPoint& p : points) {
    if (!p.decode) continue;
    x_max = std::max(x_max, p.step_bytes / 1e6);
    y_max = std::max(y_max, p.decode->max);
    lines.push_back(fmt::format("{:.6g} {:.6g} {:.6g} {:.6g} \"{}\"", p.step_bytes / 1e6, p.decode->median, p.decode->min,
                                p.decode->max, p.spec));
  }
  double bandwidth_gb_s = 0;  // the best of the models' measurements
  for (const ModelPoint& p : points) bandwidth_gb_s = std::max(bandwidth_gb_s, p.bandwidth / 1e9);
  Chart c;
  c.file = "bench-models-decode.png";
  c.alt = "Decode rate against the bytes a decode step reads, per model";
  c.script = datablock("d", lines) +
             "set title " + quoted("Decode rate vs bytes read per token, synthesized models (" + threads + ")") + "\n"
             "set xlabel 'bytes read per decode step: weights + KV cache (MB)'\nset ylabel 'decode (tok/s, engine clock)'\n" +
             fmt::format("set xrange [0:{:.6g}]\nset yrange [0:{:.6g}]\n", x_max * 1.25, y_max * 1.8) +
             "set key top right\n"
             "set samples 400\n" +
             fmt::format("bound(x) = {:.6g} * 1000 / x\n", bandwidth_gb_s) +
             "plot bound(x) with lines ls 6 title " +
             quoted(fmt::format("best measured read bandwidth ({:.1f} GB/s) / bytes per token", bandwidth_gb_s)) +
             ", $d using 1:2:3:4 with yerrorbars ls 1 title 'decode (median, min-max)', "
             "$d using 1:2:5 with labels offset 0,1.2 font ',9' notitle\n";
  return c;
}

}  // namespace

Section models_section(const SuiteRows& rows) {
  const PhaseRows& phase = rows.phase("models");
  const std::vector<ModelPoint> points = model_points_of(phase);
  if (points.empty()) return not_run("Model sizes and weight types", "models");
  const Row& first = phase.requests.front();
  const std::string threads = first["threads"].is_number() ? fmt::format("{} threads", first["threads"].get<int>()) : "";
  Section s;
  s.title = "Model sizes and weight types";
  const int ttft_prompt = points.front().ttft_prompt;
  MarkdownTable t({"model", "file (MB)", "read per token (MB)", "decode (tok/s)",
                   fmt::format("TTFT at {} tokens (s)", ttft_prompt), "prefill (tok/s)", "peak RSS (MB)",
                   "weights read (GB/s)", "read bandwidth (GB/s)", "of bandwidth"});
  for (const ModelPoint& p : points) {
    const auto gb_s = p.gb_s();
    t.add({p.spec, mb_text(p.file_bytes), mb_text(p.step_bytes), spread_text(p.decode, 2), spread_text(p.ttft, 2, 1e-3),
           spread_text(p.prefill, 1), spread_text(p.peak, 0, 1e-6), number_text(gb_s, 2),
           p.bandwidth > 0 ? fmt::format("{:.1f}", p.bandwidth / 1e9) : "–",
           gb_s && p.bandwidth > 0 ? fmt::format("{:.0f}%", 100 * *gb_s * 1e9 / p.bandwidth) : "–"});
  }
  s.charts = {decode_chart(points, threads)};
  const size_t decode_rows = rows_where(phase.requests, [](const Row& r) { return r["measure"] == "decode"; }).size();
  const size_t ttft_rows = phase.requests.size() - decode_rows;
  const Row& decode_row = *std::find_if(phase.requests.begin(), phase.requests.end(),
                                        [](const Row& r) { return r["measure"] == "decode"; });
  s.markdown = fmt::format("Random-weight models of real shapes (`nanoserve synth`), one server each, {}. Decode: {} "
                           "requests per model generating {} tokens after a {}-token prompt; TTFT: {} requests per "
                           "model with a {}-token prompt. Weights read = decode tok/s × bytes one decode step reads; "
                           "read bandwidth = this machine's (`machine/bandwidth.h`), the better of two measurements "
                           "just before and just after the model's decode requests: other tenants of a shared "
                           "machine change it within seconds.\n\n",
                           threads, decode_rows / points.size(), decode_row["max_tokens"].get<int>(),
                           decode_row["prompt_tokens"].get<int>(), ttft_rows / points.size(), ttft_prompt) +
               t.text() + "\n" + image_markdown(s.charts.front());
  double low = 1e9, high = 0, bw_low = 1e18, bw_high = 0;
  for (const ModelPoint& p : points)
    if (const auto g = p.gb_s(); g && p.bandwidth > 0) {
      low = std::min(low, *g * 1e9 / p.bandwidth);
      high = std::max(high, *g * 1e9 / p.bandwidth);
      bw_low = std::min(bw_low, p.bandwidth / 1e9);
      bw_high = std::max(bw_high, p.bandwidth / 1e9);
    }
  if (high > 0) {
    // Memory-bound decode is faster for every model that reads fewer bytes (points are sorted by bytes).
    std::string follows = " Decode speed follows the bytes each token reads: fewer bytes, faster decode (memory-bound).";
    for (size_t i = 0; i + 1 < points.size(); ++i)
      if (points[i].decode && points[i + 1].decode && points[i].decode->median < points[i + 1].decode->median) {
        follows = fmt::format(
            " Decode speed does not follow the bytes alone: {} reads fewer bytes than {} yet decodes slower, so its "
            "kernel's arithmetic, not memory, limits it on these cores.",
            points[i].spec, points[i + 1].spec);
        break;
      }
    const std::string measured = bw_high - bw_low < 0.05 ? fmt::format("{:.1f} GB/s", bw_high)
                                                         : fmt::format("{:.1f}–{:.1f} GB/s", bw_low, bw_high);
    s.findings.push_back(fmt::format(
        "Decode reads weights at {:.0f}–{:.0f}% of the read bandwidth measured around each model's decode ({}).{}",
        100 * low, 100 * high, measured, points.size() > 1 ? follows : ""));
  }
  return s;
}

}  // namespace nanoserve::bench
