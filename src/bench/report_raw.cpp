// The raw section: the same engine in-process and served, per ABBA pair; what serving
// costs is the per-pair difference (served − in-process), taken per arm (an engine and how
// many streams each side of a pair released together).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "bench/markdown.h"
#include "bench/report_sections.h"

namespace nanoserve::bench {
namespace {

// One side of a pair: its round's streams (one for the one-stream arms) and their figures;
// per-stream figures are the round's medians.
struct PairSide {
  std::vector<const Row*> streams;
  std::optional<double> ttft_ms, decode_tok_s, gap_p50_ms, gap_p99_ms;
  std::optional<double> engine_decode_tok_s;  // the engine's own clock, beside the client's
  std::optional<double> aggregate_tok_s;  // every stream's tokens / (first sent → last done)
};

struct RawPair {
  int index = 0;
  std::string order;
  PairSide served, in_process;
};

struct ArmPairs {
  std::string engine;
  int streams = 1;
  std::vector<RawPair> pairs;

  std::string name() const { return fmt::format("{}, {} stream{}", engine, streams, streams == 1 ? "" : "s"); }
};

std::optional<double> raw_median_of(const std::vector<const Row*>& rows, const std::string& key) {
  const auto s = spread_of(rows, key);
  return s ? std::optional<double>(s->median) : std::nullopt;
}

std::optional<double> round_aggregate(const std::vector<const Row*>& rows) {
  double first = 1e300, last = 0, tokens = 0;
  for (const Row* r : rows) {
    const double start_s = number(*r, "start_offset_us").value_or(0) / 1e6;
    first = std::min(first, start_s);
    last = std::max(last, start_s + (*r)["client_end_ms"].get<double>() / 1e3);
    tokens += number(*r, "completion_tokens").value_or(static_cast<double>((*r)["text_chunks"].get<int>()));
  }
  if (rows.empty() || last <= first) return std::nullopt;
  return tokens / (last - first);
}

PairSide pair_side_of(std::vector<const Row*> streams) {
  PairSide s;
  s.ttft_ms = raw_median_of(streams, "client_ttft_ms");
  s.decode_tok_s = raw_median_of(streams, "client_decode_tok_s");
  s.engine_decode_tok_s = raw_median_of(streams, "engine_decode_tok_s");
  s.gap_p50_ms = raw_median_of(streams, "gap_p50_ms");
  s.gap_p99_ms = raw_median_of(streams, "gap_p99_ms");
  s.aggregate_tok_s = round_aggregate(streams);
  s.streams = std::move(streams);
  return s;
}

// Rows written before the batch engine's arms carry neither field: they are the sequential
// engine's, one stream.
std::string raw_arm_engine(const Row& r) {
  return r.contains("in_process_engine") ? r["in_process_engine"].get<std::string>() : "sequential";
}
int raw_arm_streams(const Row& r) { return r.contains("streams") ? r["streams"].get<int>() : 1; }

// Arms in the order their rows were written; in each, the pairs with both sides complete.
std::vector<ArmPairs> raw_arms_of(const PhaseRows& phase) {
  struct Collect {
    std::string order;
    std::vector<const Row*> served, in_process;
  };
  std::vector<std::pair<std::string, int>> order;
  std::map<std::pair<std::string, int>, std::map<int, Collect>> by_arm;
  for (const Row& r : phase.requests) {
    const std::pair<std::string, int> key = {raw_arm_engine(r), raw_arm_streams(r)};
    if (!by_arm.count(key)) order.push_back(key);
    Collect& c = by_arm[key][r["pair"].get<int>()];
    c.order = r["order"];
    (r["target"] == "in-process" ? c.in_process : c.served).push_back(&r);
  }
  std::vector<ArmPairs> arms;
  for (const auto& key : order) {
    ArmPairs arm{key.first, key.second, {}};
    for (auto& [index, c] : by_arm[key])
      if (!c.served.empty() && !c.in_process.empty())
        arm.pairs.push_back({index, c.order, pair_side_of(c.served), pair_side_of(c.in_process)});
    if (!arm.pairs.empty()) arms.push_back(std::move(arm));
  }
  return arms;
}

struct RawFigure {
  const char* name;
  std::optional<double> PairSide::*value;
  bool percent;  // the difference as a share of the in-process figure
  int decimals;
};

std::optional<double> raw_difference(const RawPair& p, const RawFigure& f) {
  const auto served = p.served.*f.value, in_process = p.in_process.*f.value;
  if (!served || !in_process) return std::nullopt;
  if (!f.percent) return *served - *in_process;
  if (*in_process <= 0) return std::nullopt;
  return 100 * (*served - *in_process) / *in_process;
}

std::optional<Spread> raw_difference_spread(const ArmPairs& arm, const RawFigure& f) {
  std::vector<double> values;
  for (const RawPair& p : arm.pairs)
    if (auto d = raw_difference(p, f)) values.push_back(*d);
  return spread(std::move(values));
}

std::optional<Spread> pair_side_spread(const ArmPairs& arm, PairSide RawPair::*side, std::optional<double> PairSide::*value) {
  std::vector<double> values;
  for (const RawPair& p : arm.pairs)
    if (auto v = p.*side.*value) values.push_back(*v);
  return spread(std::move(values));
}

// A round of streams is summed up by its aggregate, one stream by its own decode rate.
RawFigure raw_headline_decode(const ArmPairs& arm) {
  return arm.streams > 1 ? RawFigure{"aggregate (%)", &PairSide::aggregate_tok_s, true, 2}
                         : RawFigure{"decode (%)", &PairSide::decode_tok_s, true, 2};
}

RawFigure raw_ttft_figure(const ArmPairs& arm) {
  return {arm.streams > 1 ? "TTFT, median stream (ms)" : "TTFT (ms)", &PairSide::ttft_ms, false, 2};
}

// What the differences are taken of; a round's per-stream figures are its medians. The
// engine's clock tells a slower engine (the machine, or what shares its cores) from a slower
// path to the client: a gap the engine's clock shows too is not in the stream's delivery.
std::vector<RawFigure> raw_figures_of(const ArmPairs& arm) {
  std::vector<RawFigure> out;
  if (arm.streams > 1) out.push_back({"decode per stream (%)", &PairSide::decode_tok_s, true, 2});
  out.push_back(raw_headline_decode(arm));
  out.push_back({arm.streams > 1 ? "decode per stream, engine clock (%)" : "decode, engine clock (%)",
                 &PairSide::engine_decode_tok_s, true, 2});
  out.push_back(raw_ttft_figure(arm));
  out.push_back({"gap p50 (ms)", &PairSide::gap_p50_ms, false, 3});
  out.push_back({"gap p99 (ms)", &PairSide::gap_p99_ms, false, 3});
  return out;
}

std::string raw_signed_text(double v, int decimals) { return fmt::format("{:+.{}f}", v, decimals); }

std::string raw_figures_table(const std::vector<ArmPairs>& arms) {
  MarkdownTable t({"arm", "side", "TTFT (ms)", "decode per stream (tok/s)", "aggregate (tok/s)", "gap p50 (ms)",
                   "gap p99 (ms)"});
  for (const ArmPairs& arm : arms)
    for (const auto& [label, side] : {std::pair{"in-process", &RawPair::in_process}, std::pair{"served", &RawPair::served}})
      t.add({arm.name(), label, spread_text(pair_side_spread(arm, side, &PairSide::ttft_ms), 1),
             spread_text(pair_side_spread(arm, side, &PairSide::decode_tok_s), 2),
             arm.streams > 1 ? spread_text(pair_side_spread(arm, side, &PairSide::aggregate_tok_s), 2) : "–",
             spread_text(pair_side_spread(arm, side, &PairSide::gap_p50_ms), 2),
             spread_text(pair_side_spread(arm, side, &PairSide::gap_p99_ms), 2)});
  return t.text();
}

std::string raw_differences_table(const ArmPairs& arm) {
  MarkdownTable t({fmt::format("{} ({} pair{}): served − in-process, per pair", arm.name(), arm.pairs.size(),
                               arm.pairs.size() == 1 ? "" : "s"), "median",
                   "min", "max"});
  for (const RawFigure& f : raw_figures_of(arm))
    if (const auto d = raw_difference_spread(arm, f))
      t.add({f.name, raw_signed_text(d->median, f.decimals), raw_signed_text(d->min, f.decimals),
             raw_signed_text(d->max, f.decimals)});
  return t.text();
}

std::string raw_number_or_nan(std::optional<double> v) { return v ? fmt::format("{:.6g}", *v) : "NaN"; }

Chart raw_pairs_chart(const std::vector<ArmPairs>& arms, const std::string& setup) {
  std::string blocks, decode_plot, ttft_plot;
  size_t most_pairs = 0;
  for (size_t i = 0; i < arms.size(); ++i) {
    const ArmPairs& arm = arms[i];
    std::vector<std::string> lines;
    for (const RawPair& p : arm.pairs)
      lines.push_back(fmt::format("{} {} {}", p.index + 1, raw_number_or_nan(raw_difference(p, raw_headline_decode(arm))),
                                  raw_number_or_nan(raw_difference(p, raw_ttft_figure(arm)))));
    const std::string name = fmt::format("a{}", i);
    blocks += datablock(name, lines);
    const std::string title = quoted(arm.name() + (arm.streams > 1 ? " (aggregate)" : ""));
    const std::string sep = i == 0 ? "plot " : ", ";
    decode_plot += sep + fmt::format("${} using 1:2 with linespoints ls {} title {}", name, i + 1, title);
    ttft_plot += sep + fmt::format("${} using 1:3 with linespoints ls {} title {}", name, i + 1, quoted(arm.name()));
    most_pairs = std::max(most_pairs, arm.pairs.size());
  }
  Chart c;
  c.file = "bench-raw-pairs.png";
  c.alt = "In-process engine vs served, per ABBA pair";
  c.height = 720;
  c.script = blocks + "set multiplot layout 2,1 title " +
             quoted("Same engine, served minus in-process, per ABBA pair (" + setup + ")") + "\n"
             "set xlabel 'pair (odd: served first, even: in-process first)'\nset xtics 1\n" +
             fmt::format("set xrange [0.4:{}.6]\n", most_pairs) +
             "set ylabel 'decode, served vs in-process (%)'\nset key bottom right\n" + decode_plot +
             ", 0 with lines ls 6 notitle\n"
             "set ylabel 'TTFT, served minus in-process (ms)'\nset key top right\n" + ttft_plot +
             ", 0 with lines ls 6 notitle\n"
             "unset multiplot\n";
  return c;
}

std::string raw_finding(const ArmPairs& arm) {
  const auto decode = raw_difference_spread(arm, raw_headline_decode(arm));
  const auto ttft = raw_difference_spread(arm, raw_ttft_figure(arm));
  if (!decode || !ttft) return "";
  return fmt::format(
      "Serving over HTTP, {} engine, {}: {} {:+.2f}% (per pair {:+.1f} to {:+.1f}%), TTFT {:+.2f} ms (per pair {:+.1f} "
      "to {:+.1f}); medians of {} ABBA pairs, a per-pair range wider than the median is the machine's own variation.",
      arm.engine, arm.streams == 1 ? "one stream" : fmt::format("{} streams at once", arm.streams),
      arm.streams > 1 ? "aggregate decode" : "decode", decode->median, decode->min, decode->max, ttft->median,
      ttft->min, ttft->max, arm.pairs.size());
}

}  // namespace

Section raw_section(const SuiteRows& rows) {
  const PhaseRows& phase = rows.phase("raw");
  const std::vector<ArmPairs> arms = raw_arms_of(phase);
  if (arms.empty()) return not_run("In-process vs served (raw)", "raw");
  const Row& first = phase.requests.front();
  const std::string setup = setup_text(first);
  Section s;
  s.title = "In-process vs served (raw)";
  std::string rounds;
  for (const ArmPairs& arm : arms)
    if (arm.streams > 1)
      rounds = fmt::format(" In the {} arm each side of a pair is a round of {} requests released together (in-process: "
                           "a thread each, submitting to the engine at once; served: a connection each); its per-stream "
                           "figures are the round's medians, its aggregate all the round's tokens over the round's time.",
                           arm.name(), arm.streams);
  s.markdown = fmt::format("{}; ABBA pairs of {}-token prompts generating {} tokens, per arm (an engine, and the "
                           "requests each side of a pair sends at once). Both sides are timed the same way: clock "
                           "started before the request leaves, each piece of text stamped as it arrives.{}\n\n",
                           setup, first["prompt_tokens"].get<int>(), first["max_tokens"].get<int>(), rounds) +
               raw_figures_table(arms);
  for (const ArmPairs& arm : arms) s.markdown += "\n" + raw_differences_table(arm);
  s.charts = {raw_pairs_chart(arms, setup)};
  s.markdown += "\n" + image_markdown(s.charts.front());
  for (const ArmPairs& arm : arms)
    if (std::string f = raw_finding(arm); !f.empty()) s.findings.push_back(std::move(f));
  return s;
}

}  // namespace nanoserve::bench
