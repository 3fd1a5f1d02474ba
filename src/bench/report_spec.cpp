// The spec section: what a verify step costs by its rows (the curve that makes speculation
// pay on a memory-bound CPU), pycoder's tokens per read of the weights and decode rate with
// speculation off, prompt lookup and a draft model (and the acceptance by position in a
// draft), streams at once, and the random-weight model, where speculation must cost nothing.
#include <fmt/format.h>

#include <map>
#include <set>

#include "bench/markdown.h"
#include "bench/report_sections.h"

namespace nanoserve::bench {
namespace {

// The rows' `spec`: draft-always is the draft model at fixed lengths (--draft-policy always).
const std::vector<std::string> kModes = {"off", "lookup", "draft", "draft-always"};

std::vector<const Row*> requests_of(const PhaseRows& phase, const std::string& case_name, const std::string& spec) {
  return rows_where(phase.requests, [&](const Row& r) { return r["case"] == case_name && r["spec"] == spec; });
}

double sum_of(const std::vector<const Row*>& rows, const std::string& key) {
  double sum = 0;
  for (const Row* r : rows) sum += number(*r, key).value_or(0);
  return sum;
}

// Generated tokens ÷ the forward steps that gave them.
std::optional<double> tokens_per_step(const std::vector<const Row*>& rows) {
  const double steps = sum_of(rows, "engine_decode_steps");
  return steps > 0 ? std::optional(sum_of(rows, "completion_tokens") / steps) : std::nullopt;
}

// "0.95 0.90 ...": of the drafts that reached each position, the share accepted there.
std::string acceptance_by_position(const std::vector<const Row*>& rows) {
  std::vector<double> drafted, accepted;
  for (const Row* r : rows)
    for (const auto& [key, out] : {std::pair{"engine_drafted_at", &drafted}, std::pair{"engine_accepted_at", &accepted}}) {
      const Row& values = (*r)[key];
      if (out->size() < values.size()) out->resize(values.size(), 0);
      for (size_t j = 0; j < values.size(); ++j) (*out)[j] += values[j].get<double>();
    }
  std::string text;
  for (size_t j = 0; j < drafted.size() && j < accepted.size(); ++j)
    if (drafted[j] > 0) text += fmt::format("{}{:.2f}", text.empty() ? "" : " ", accepted[j] / drafted[j]);
  return text.empty() ? "—" : text;
}

// One round of streams, in seconds from its first request: the last stream's first token (the
// round's prompts are in by then) and the last stream's end.
struct RoundTimes {
  double last_first_token = 0, end = 0, tokens = 0;
};

std::vector<RoundTimes> round_times(const std::vector<const Row*>& rows) {
  std::map<int, std::vector<const Row*>> rounds;
  for (const Row* r : rows) rounds[(*r)["round"].get<int>()].push_back(r);
  std::vector<RoundTimes> out;
  for (const auto& [round, streams] : rounds) {
    double first = 1e300;
    for (const Row* s : streams) first = std::min(first, (*s)["start_offset_us"].get<double>() / 1e6);
    RoundTimes t;
    for (const Row* s : streams) {
      const double start = (*s)["start_offset_us"].get<double>() / 1e6 - first;
      t.last_first_token = std::max(t.last_first_token, start + (*s)["client_ttft_ms"].get<double>() / 1e3);
      t.end = std::max(t.end, start + (*s)["client_end_ms"].get<double>() / 1e3);
      t.tokens += number(*s, "completion_tokens").value_or(0);
    }
    if (t.end > 0) out.push_back(t);
  }
  return out;
}

// Per round: every stream's completion tokens ÷ (first request sent -> last stream's end).
std::optional<Spread> aggregate_rate(const std::vector<const Row*>& rows) {
  std::vector<double> rates;
  for (const RoundTimes& t : round_times(rows)) rates.push_back(t.tokens / t.end);
  return spread(std::move(rates));
}

// The rows' model file ("" where they name none).
std::string model_of(const std::vector<const Row*>& rows) {
  const Row& r = *rows.front();
  return r["model_file"].is_string() ? r["model_file"].get<std::string>() : "";
}

std::string times(std::optional<double> a, std::optional<double> b) {
  return a && b && *b > 0 ? fmt::format("{:.2f}×", *a / *b) : "—";
}

std::optional<double> median(const std::optional<Spread>& s) { return s ? std::optional(s->median) : std::nullopt; }

// (a) The step cost by rows, and its chart.
void step_table(const PhaseRows& phase, Section& s) {
  if (phase.steps.empty()) return;
  std::map<int, std::vector<const Row*>> by_rows;
  for (const Row& r : phase.steps) by_rows[r["rows"].get<int>()].push_back(&r);
  const Row& first = phase.steps.front();
  const double weight_bytes = first["weight_bytes_per_token"].get<double>();
  const double elements = first["matrix_elements"].get<double>();
  const std::optional<double> one = median(spread_of(by_rows[1], "step_ms"));
  MarkdownTable t({"rows", "step (ms)", "× 1 row", "weights read (GB/s)", "GFLOP/s"});
  std::vector<std::string> points;
  for (const auto& [n, rows] : by_rows) {
    const auto ms = spread_of(rows, "step_ms");
    if (!ms) continue;
    t.add({std::to_string(n), spread_text(ms, 2), times(ms->median, one),
           fmt::format("{:.1f}", weight_bytes / (ms->median / 1e3) / 1e9),
           fmt::format("{:.1f}", 2 * elements * n / (ms->median / 1e3) / 1e9)});
    points.push_back(fmt::format("{} {:.6g}", n, ms->median));
  }
  Chart c;
  c.file = "bench-spec-step-rows.png";
  c.alt = "Forward step time by rows";
  c.script = datablock("d", points) + "set title " +
             quoted("One forward step by its rows, after " + std::to_string(first["context_tokens"].get<int>()) +
                    " positions (" + setup_text(first) + ")") +
             "\nset xlabel 'rows (1 + draft tokens)'\nset ylabel 'step (ms)'\nset yrange [0:*]\nset grid\n"
             "unset key\nplot $d using 1:2 with linespoints ls 1 pt 7\n";
  s.charts.push_back(c);
  s.markdown += fmt::format("**A step's cost by its rows** ({}, {} positions in the cache; medians (min–max) of "
                            "{} steps each). A verify step of k draft tokens has k + 1 rows.\n\n",
                            setup_text(first), first["context_tokens"].get<int>(), by_rows.begin()->second.size()) +
                t.text() + "\n" + image_markdown(c) + "\n";
  const auto five = median(spread_of(by_rows[5], "step_ms"));
  if (one && five)
    s.findings.push_back(fmt::format("A verify step of 5 rows cost {:.2f}× a 1-row decode step ({:.1f} vs {:.1f} ms).",
                                     *five / *one, *five, *one));
}

// (b) pycoder, one stream per drafter.
void continue_table(const PhaseRows& phase, Section& s) {
  const auto off_rows = requests_of(phase, "continue", "off");
  if (off_rows.empty()) return;
  const std::optional<double> off_rate = median(spread_of(off_rows, "client_decode_tok_s"));
  MarkdownTable t({"spec", "tokens per read", "decode tok/s", "× off", "accepted by position in the draft"});
  for (const std::string& mode : kModes) {
    const auto rows = requests_of(phase, "continue", mode);
    if (rows.empty()) continue;
    const auto rate = spread_of(rows, "client_decode_tok_s");
    t.add({mode, number_text(tokens_per_step(rows), 2), spread_text(rate, 1), times(median(rate), off_rate),
           mode == "off" ? "—" : acceptance_by_position(rows)});
    if (mode != "off" && tokens_per_step(rows))
      s.findings.push_back(fmt::format("pycoder continuing Python, {}: {:.2f} tokens per read of the weights, decode "
                                       "{} the rate without speculation.",
                                       mode, *tokens_per_step(rows), times(median(rate), off_rate)));
  }
  const Row& r = *off_rows.front();
  s.markdown += fmt::format("**pycoder continuing Python source** ({}; {} files of the standard library, {}-token "
                            "prompts, {} greedy tokens; off is the lookup server's requests with "
                            "`\"speculative\": false`; the draft model is pycoder Q4_K_M, its drafts as long as they "
                            "pay for (draft) or always as long as --draft-max (draft-always); medians (min–max) over "
                            "files). Tokens per read: generated tokens ÷ the forward steps of the model that gave "
                            "them.\n\n",
                            setup_text(r), off_rows.size(), r["prompt_tokens"].get<int>(), r["max_tokens"].get<int>()) +
                t.text() + "\n";
}

// " (8)": the streams of a round; " (8, 4 requests each)" where they sent more than one.
std::string streams_text(const std::vector<const Row*>& rows) {
  std::set<int> streams, rounds;
  for (const Row* r : rows) {
    streams.insert((*r)["stream"].get<int>());
    rounds.insert((*r)["round"].get<int>());
  }
  const size_t each = rows.size() / std::max<size_t>(1, streams.size() * rounds.size());
  return each > 1 ? fmt::format(" ({}, {} requests each)", streams.size(), each) : fmt::format(" ({})", streams.size());
}

// (b, c) Streams at once, and the random-weight model's single stream.
void streams_table(const PhaseRows& phase, Section& s) {
  MarkdownTable t({"model", "case", "spec", "tok/s", "× off"});
  for (const auto& [case_name, label] : std::vector<std::pair<std::string, std::string>>{
           {"streams", "streams at once, aggregate"}, {"in_flight", "streams kept in flight, aggregate"},
           {"random", "one stream, decode"}, {"random_streams", "streams at once, aggregate"}}) {
    const bool aggregate = case_name != "random";
    auto rate_of = [&](const std::string& mode) {
      const auto rows = requests_of(phase, case_name, mode);
      return aggregate ? aggregate_rate(rows) : spread_of(rows, "client_decode_tok_s");
    };
    const std::optional<double> off = median(rate_of("off"));
    for (const std::string& mode : kModes) {
      const auto rows = requests_of(phase, case_name, mode);
      if (rows.empty()) continue;
      const auto rate = rate_of(mode);
      const std::string model = model_of(rows);
      const std::string streams = aggregate ? streams_text(rows) : "";
      t.add({model, label + streams, mode, spread_text(rate, 1), mode == "off" ? "1" : times(median(rate), off)});
      if (mode == "lookup" && off)
        s.findings.push_back(fmt::format("{}, {}: speculation on gives {} the rate with it off.", model, label + streams,
                                         times(median(rate), off)));
    }
  }
  if (t.empty()) return;
  s.markdown += "**Streams at once, and a model with nothing to guess** (random weights; side by side, in A B B A "
                "order, A B C D D C B A with four, speculation off being the lookup server's own requests with "
                "`\"speculative\": false`: identical servers differ by where their copy of the weights lies; "
                "medians (min–max) over rounds or requests). At once: the streams start together and the "
                "round ends with the last of them; kept in flight: each stream sends its next request as soon as "
                "one ends. Aggregate: the completion tokens ÷ (first request sent → last stream's end).\n\n" +
                t.text() + "\n";
}

// Where a round of streams at once spends its time: until the last stream's first token every
// prompt is computed, which speculation leaves as it is; the decoding after it is what drafts
// can shorten. The round's figure is both together.
void round_parts_table(const PhaseRows& phase, Section& s) {
  MarkdownTable t({"model", "case", "spec", "to the last first token (ms)", "after it (ms)", "× off, after it"});
  for (const std::string case_name : {"streams", "random_streams"}) {
    auto parts = [&](const std::string& mode) {
      std::vector<double> before, after;
      for (const RoundTimes& r : round_times(requests_of(phase, case_name, mode))) {
        before.push_back(1e3 * r.last_first_token);
        after.push_back(1e3 * (r.end - r.last_first_token));
      }
      return std::pair{spread(std::move(before)), spread(std::move(after))};
    };
    const auto off = parts("off");
    for (const std::string& mode : kModes) {
      const auto rows = requests_of(phase, case_name, mode);
      if (rows.empty()) continue;
      const auto [before, after] = parts(mode);
      const std::string model = model_of(rows);
      // The speedup of the part after: the off round's time ÷ this one's.
      const std::string speedup = mode == "off" ? "1" : times(median(off.second), median(after));
      t.add({model, "streams at once" + streams_text(rows), mode, spread_text(before, 0), spread_text(after, 0), speedup});
      const auto off_before = median(off.first), off_after = median(off.second);
      if (mode == "lookup" && case_name == "streams" && off_before && off_after && median(after))
        s.findings.push_back(fmt::format(
            "{}, streams at once{}: to the last stream's first token (the prompts) {:.0f} ms with speculation off, "
            "{:.0f} with lookup ({:.0f}% of the off round); the decoding after it is {} as fast with lookup.",
            model, streams_text(rows), *off_before, *median(before), 100 * *off_before / (*off_before + *off_after),
            speedup));
    }
  }
  if (t.empty()) return;
  s.markdown += "**A round at once, in two parts** (the rounds above; medians (min–max)): from the first request to "
                "the last stream's first token, the prompts are computed (and taken in by a draft model, where there is "
                "one); after it, the streams decode to the end, which drafts shorten.\n\n" +
                t.text() + "\n";
}

// (d) A hybrid's MTP block where its guesses fail: what it costs.
void mtp_table(const PhaseRows& phase, Section& s) {
  const auto off_rows = requests_of(phase, "mtp", "off"), mtp_rows = requests_of(phase, "mtp", "mtp");
  if (off_rows.empty() || mtp_rows.empty()) return;
  const auto off = spread_of(off_rows, "client_decode_tok_s"), on = spread_of(mtp_rows, "client_decode_tok_s");
  MarkdownTable t({"model", "spec", "tokens per read", "decode tok/s", "× off", "accepted by position in the draft"});
  t.add({model_of(off_rows), "off", number_text(tokens_per_step(off_rows), 2), spread_text(off, 1), "1", "—"});
  t.add({model_of(mtp_rows), "mtp", number_text(tokens_per_step(mtp_rows), 2), spread_text(on, 1),
         times(median(on), median(off)), acceptance_by_position(mtp_rows)});
  if (median(on) && median(off))
    s.findings.push_back(fmt::format("{}, its MTP block drafting where every guess fails (random weights): decode {} "
                                     "the rate with speculation off.",
                                     model_of(mtp_rows), times(median(on), median(off))));
  s.markdown += fmt::format("**A hybrid's own MTP block, where its guesses fail** ({}; random weights; one server "
                            "with `--spec mtp`, off being its requests with `\"speculative\": false`, which the block "
                            "does not follow; {} and {} requests in A B B A pairs; medians (min–max)). Its cost when "
                            "it cannot guess: following every step, and the drafts the policy still tries.\n\n",
                            setup_text(*off_rows.front()), off_rows.size(), mtp_rows.size()) +
                t.text() + "\n";
}

}  // namespace

Section spec_section(const SuiteRows& rows) {
  const PhaseRows& phase = rows.phase("spec");
  if (phase.requests.empty() && phase.steps.empty()) return not_run("Speculative decoding", "spec");
  Section s;
  s.title = "Speculative decoding";
  step_table(phase, s);
  continue_table(phase, s);
  streams_table(phase, s);
  round_parts_table(phase, s);
  mtp_table(phase, s);
  return s;
}

}  // namespace nanoserve::bench
