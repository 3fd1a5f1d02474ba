// The pieces of the summary: markdown tables and figures, the README splice between its
// markers, and the sections built from rows.
#include <gtest/gtest.h>

#include "bench/markdown.h"
#include "bench/readme_splice.h"
#include "bench/report_sections.h"

namespace nanoserve::bench {
namespace {

TEST(Markdown, TablesAlignFigures) {
  MarkdownTable t({"name", "value"});
  t.add({"a", "1.0"});
  EXPECT_EQ(t.text(), "| name | value |\n|---|---:|\n| a | 1.0 |\n");
  MarkdownTable plain({"k", "v"}, false);
  plain.add({"x", "y"});
  EXPECT_EQ(plain.text(), "| k | v |\n|---|---|\n| x | y |\n");
  EXPECT_THROW(t.add({"too few"}), std::logic_error);
}

TEST(Markdown, SpreadsShowMedianAndRange) {
  EXPECT_EQ(spread_text(Spread{2, 1, 3, 3}, 1), "2.0 (1.0–3.0)");
  EXPECT_EQ(spread_text(Spread{2, 2, 2, 3}, 1), "2.0");
  EXPECT_EQ(spread_text(Spread{2500, 2000, 3000, 1}, 2, 1e-3), "2.50");
  EXPECT_EQ(spread_text(std::nullopt, 1), "–");
  EXPECT_EQ(mb_text(1.5e6), "1.5");
  EXPECT_EQ(number_text(std::nullopt, 2), "–");
}

TEST(ReadmeSplice, ReplacesOnlyWhatIsBetweenTheMarkers) {
  const std::string begin = kResultsBegin, end = kResultsEnd;
  const std::string readme = "# T\n\nintro\n" + begin + "\nold\nlines\n" + end + "\nafter\n";
  EXPECT_EQ(splice_between_markers(readme, "new"), "# T\n\nintro\n" + begin + "\nnew\n" + end + "\nafter\n");
  // Splicing twice gives the same file.
  EXPECT_EQ(splice_between_markers(splice_between_markers(readme, "new\n"), "new\n"),
            splice_between_markers(readme, "new\n"));
}

TEST(ReadmeSplice, MissingOrRepeatedMarkersAreErrors) {
  const std::string begin = kResultsBegin, end = kResultsEnd;
  EXPECT_THROW(splice_between_markers("no markers", "x"), std::runtime_error);
  EXPECT_THROW(splice_between_markers(begin + "\n", "x"), std::runtime_error);
  EXPECT_THROW(splice_between_markers(end + "\n" + begin + "\n", "x"), std::runtime_error);
  EXPECT_THROW(splice_between_markers(begin + end + begin + end, "x"), std::runtime_error);
}

// A context row as the suite writes one (the fields the section reads); kv_type "" leaves the
// field out, as rows written before the q8_0 cache did.
Row context_row(int prompt, const std::string& kv_type, double kv_bytes, double peak, double decode) {
  Row r = {{"model_file", "m.gguf"}, {"threads", 2}, {"prompt_tokens", prompt}, {"max_tokens", 16},
           {"client_ttft_ms", 100.0}, {"engine_ttft_ms", 99.0}, {"engine_prefill_tok_s", 500.0},
           {"client_decode_tok_s", decode}, {"engine_decode_tok_s", decode}, {"gap_p50_ms", 10.0},
           {"gap_p99_ms", 12.0}, {"peak_memory_bytes", peak}, {"context_size", prompt + 16},
           {"kv_cache_bytes", kv_bytes}, {"model_file_bytes", 5e8}};
  if (!kv_type.empty()) r["kv_type"] = kv_type;
  return r;
}

// Each prompt length has a row per KV cache type, and a table sets q8_0's figures against
// F16's: the formula's bytes, peak memory, decode rate; rows without a type are F16's.
TEST(ContextSection, ShowsEachKvTypeAndTheQ8_0CacheAgainstF16) {
  SuiteRows rows;
  auto& requests = rows.phases["context"].requests;
  requests = {context_row(512, "", 6.4e6, 6.0e8, 80.0), context_row(512, "q8_0", 3.4e6, 5.9e8, 84.0),
              context_row(4096, "f16", 51.2e6, 6.5e8, 60.0), context_row(4096, "q8_0", 27.2e6, 6.2e8, 75.0)};
  const Section s = context_section(rows);
  EXPECT_NE(s.markdown.find("| 512 | f16 |"), std::string::npos) << s.markdown;
  EXPECT_NE(s.markdown.find("| 4096 | q8_0 |"), std::string::npos) << s.markdown;
  // 27.2 / 51.2 of the formula, 30 MB less at the peak, decode 75 / 60.
  EXPECT_NE(s.markdown.find("| 4096 | 0.531 | -30 | 1.00× | 1.25× |"), std::string::npos) << s.markdown;
  ASSERT_EQ(s.charts.size(), 3u);
  for (const Chart& c : s.charts) EXPECT_NE(c.script.find("q8_0 KV"), std::string::npos) << c.file;
  bool found = false;
  for (const auto& f : s.findings) found = found || f.find("decode at 75.0 tok/s instead of 60.0 (1.25×)") != std::string::npos;
  EXPECT_TRUE(found);
}

// A raw row: one side of pair `pair` of an arm; `engine` "" leaves the arm's fields out, as
// rows written before the batch engine's arms did (the sequential engine's, one stream).
Row raw_row(const std::string& engine, int streams, int pair, const std::string& target, int stream, double ttft,
            double decode, double end_ms, double engine_decode = 0) {
  Row r = {{"model_file", "m.gguf"}, {"threads", 2}, {"prompt_tokens", 64}, {"max_tokens", 20},
           {"engine", engine.empty() ? "sequential" : engine}, {"target", target}, {"pair", pair},
           {"order", pair % 2 == 0 ? "served first" : "in-process first"}, {"client_ttft_ms", ttft},
           {"client_decode_tok_s", decode}, {"engine_decode_tok_s", engine_decode > 0 ? engine_decode : decode},
           {"gap_p50_ms", 1000 / decode}, {"gap_p99_ms", 2000 / decode},
           {"client_end_ms", end_ms}, {"completion_tokens", 20}, {"text_chunks", 20}};
  if (!engine.empty()) {
    r["in_process_engine"] = engine;
    r["streams"] = streams;
    r["stream"] = stream;
    r["start_offset_us"] = 0;
  }
  return r;
}

// The lines of the markdown table whose header starts with `header`, up to the blank line after it.
std::string table_after(const std::string& markdown, const std::string& header) {
  const size_t start = markdown.find("| " + header);
  if (start == std::string::npos) return "";
  return markdown.substr(start, markdown.find("\n\n", start) - start);
}

// Each arm (sequential one stream, batch one stream, batch rounds of streams) gets its own
// per-pair differences: decode as a share of the in-process rate, TTFT in ms, and a round's
// aggregate over its whole time; rows from before the arms existed are the sequential arm's.
TEST(RawSection, SplitsTheArmsAndTakesDifferencesPerPair) {
  SuiteRows rows;
  auto& requests = rows.phases["raw"].requests;
  // Sequential, old rows: decode −10%, −5%, 0%; TTFT +10, +4, 0 ms; by the engine's clock, the
  // served engine ran 1% slower in every pair.
  const double sequential_served[3][2] = {{90, 110}, {95, 104}, {100, 100}};
  for (int pair = 0; pair < 3; ++pair) {
    requests.push_back(
        raw_row("", 1, pair, "served", 0, sequential_served[pair][1], sequential_served[pair][0], 300, 99));
    requests.push_back(raw_row("", 1, pair, "in-process", 0, 100, 100, 300));
  }
  // Batch, one stream: decode +2% in every pair, TTFT −1 ms. Mixed with the sequential arm's
  // pairs (same pair numbers), the medians would differ.
  for (int pair = 0; pair < 3; ++pair) {
    requests.push_back(raw_row("batch", 1, pair, "in-process", 0, 50, 50, 500));
    requests.push_back(raw_row("batch", 1, pair, "served", 0, 49, 51, 500));
  }
  // Batch, rounds of 2: in-process streams at 40 tok/s, TTFT 50 ms, both done at 1 s (40 tok/s
  // together); served streams at 30 and 34 (median 32), TTFT 60 and 80 (median 70), done at
  // 1.25 s (32 tok/s together): −20% per stream and in aggregate, +20 ms.
  for (int pair = 0; pair < 3; ++pair)
    for (int stream = 0; stream < 2; ++stream) {
      requests.push_back(raw_row("batch", 2, pair, "served", stream, stream ? 80 : 60, stream ? 34 : 30, 1250));
      requests.push_back(raw_row("batch", 2, pair, "in-process", stream, 50, 40, 1000));
    }
  const Section s = raw_section(rows);
  const std::string sequential = table_after(s.markdown, "sequential, 1 stream (3 pairs): served − in-process");
  EXPECT_NE(sequential.find("| decode (%) | -5.00 | -10.00 | +0.00 |"), std::string::npos) << s.markdown;
  EXPECT_NE(sequential.find("| TTFT (ms) | +4.00 | +0.00 | +10.00 |"), std::string::npos) << s.markdown;
  EXPECT_NE(sequential.find("| decode, engine clock (%) | -1.00 | -1.00 | -1.00 |"), std::string::npos) << s.markdown;
  const std::string batch_one = table_after(s.markdown, "batch, 1 stream (3 pairs): served − in-process");
  EXPECT_NE(batch_one.find("| decode (%) | +2.00 | +2.00 | +2.00 |"), std::string::npos) << s.markdown;
  EXPECT_NE(batch_one.find("| TTFT (ms) | -1.00 | -1.00 | -1.00 |"), std::string::npos) << s.markdown;
  const std::string batch_two = table_after(s.markdown, "batch, 2 streams (3 pairs): served − in-process");
  EXPECT_NE(batch_two.find("| decode per stream (%) | -20.00 | -20.00 | -20.00 |"), std::string::npos) << s.markdown;
  EXPECT_NE(batch_two.find("| aggregate (%) | -20.00 | -20.00 | -20.00 |"), std::string::npos) << s.markdown;
  EXPECT_NE(batch_two.find("| TTFT, median stream (ms) | +20.00 | +20.00 | +20.00 |"), std::string::npos)
      << s.markdown;
  // The figures themselves: a round's medians and its aggregate; one stream has no aggregate.
  EXPECT_NE(s.markdown.find("| batch, 2 streams | served | 70.0 | 32.00 | 32.00 |"), std::string::npos) << s.markdown;
  EXPECT_NE(s.markdown.find("| batch, 1 stream | in-process | 50.0 | 50.00 | – |"), std::string::npos) << s.markdown;
  ASSERT_EQ(s.findings.size(), 3u);
  EXPECT_NE(s.findings[0].find("sequential engine, one stream: decode -5.00% (per pair -10.0 to +0.0%)"),
            std::string::npos) << s.findings[0];
  EXPECT_NE(s.findings[2].find("batch engine, 2 streams at once: aggregate decode -20.00%"), std::string::npos)
      << s.findings[2];
  ASSERT_EQ(s.charts.size(), 1u);
  EXPECT_NE(s.charts[0].script.find("batch, 2 streams (aggregate)"), std::string::npos) << s.charts[0].script;
}

// A side without its other half (an interrupted run) makes no pair; with no pair at all the
// section says the phase was not run.
TEST(RawSection, OnlyWholePairsCount) {
  SuiteRows rows;
  auto& requests = rows.phases["raw"].requests;
  requests.push_back(raw_row("batch", 1, 0, "served", 0, 49, 51, 500));
  EXPECT_NE(raw_section(rows).markdown.find("Not measured in this run"), std::string::npos);
  requests.push_back(raw_row("batch", 1, 0, "in-process", 0, 50, 50, 500));
  requests.push_back(raw_row("batch", 1, 1, "served", 0, 10, 10, 500));
  const Section s = raw_section(rows);
  EXPECT_NE(s.markdown.find("| batch, 1 stream (1 pair): served − in-process"), std::string::npos) << s.markdown;
  EXPECT_NE(s.markdown.find("| decode (%) | +2.00 | +2.00 | +2.00 |"), std::string::npos) << s.markdown;
}

// A spec row of a round of streams at once: sent `start` ms after the round began, its first token
// `ttft` ms later, its end `end` ms after it was sent.
Row stream_row(const std::string& spec, int round, int stream, double start, double ttft, double end) {
  return Row{{"kind", "request"}, {"case", "streams"}, {"spec", spec}, {"round", round}, {"stream", stream},
             {"model_file", "m.gguf"}, {"start_offset_us", 1e3 * start}, {"client_ttft_ms", ttft},
             {"client_end_ms", end}, {"completion_tokens", 100}};
}

// A round at once splits at the last stream's first token: the prompts before it, the decoding
// after it, which is what drafts shorten; the part after is set against speculation off's.
TEST(SpecSection, SplitsARoundAtOnceAtTheLastFirstToken) {
  SuiteRows rows;
  auto& requests = rows.phases["spec"].requests;
  for (int round : {0, 1}) {
    // Off: the second stream's first token 110 ms into the round, the end at 510 (400 after it).
    requests.push_back(stream_row("off", round, 0, 0, 50, 500));
    requests.push_back(stream_row("off", round, 1, 10, 100, 500));
    // Lookup: the same prompts, then 200 ms of decoding: twice as fast.
    requests.push_back(stream_row("lookup", round, 0, 0, 50, 300));
    requests.push_back(stream_row("lookup", round, 1, 10, 100, 300));
  }
  const Section s = spec_section(rows);
  EXPECT_NE(s.markdown.find("| m.gguf | streams at once (2) | off | 110 | 400 | 1 |"), std::string::npos) << s.markdown;
  EXPECT_NE(s.markdown.find("| m.gguf | streams at once (2) | lookup | 110 | 200 | 2.00× |"), std::string::npos)
      << s.markdown;
  bool found = false;
  for (const auto& f : s.findings)
    found = found || f.find("110 ms with speculation off, 110 with lookup (22% of the off round); the decoding after "
                            "it is 2.00× as fast") != std::string::npos;
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace nanoserve::bench
