#include "tokenizer/vocab_hf.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "tokenizer/merges.h"

namespace nanoserve::tokenizer {
namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("tokenizer.json: " + what); }

std::string type_of(const Json& node) {
  if (!node.is_object()) return "";
  const auto it = node.find("type");
  return it != node.end() && it->is_string() ? it->get<std::string>() : "";
}

bool is_set(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && !it->is_null() && *it != false && *it != "";
}

// convert_hf_to_gguf.py's does_token_look_special: added tokens some models forget to mark special.
bool looks_special(std::string_view text) {
  if (text == "<pad>" || text == "<mask>" || text == "<2mass>" || text == "[@BOS@]") return true;
  const auto wrapped = [&](std::string_view open, std::string_view close) {
    return text.size() >= open.size() + close.size() && text.starts_with(open) && text.ends_with(close);
  };
  return wrapped("<|", "|>") || wrapped("<\uFF5C", "\uFF5C>") || wrapped("<unused", ">");
}

Normalization read_normalizer(const Json& normalizer) {
  if (normalizer.is_null()) return Normalization::kNone;
  if (type_of(normalizer) == "NFC") return Normalization::kNfc;
  fail("unsupported normalizer " + normalizer.dump() + " (supported: null, NFC)");
}

bool is_string_pattern(const Json& node, const char* key, std::string_view value) {
  const Json& pattern = node.value(key, Json::object());
  return pattern.is_object() && pattern.contains("String") && pattern["String"] == value;
}

// A byte-fallback vocabulary's normalizer: spaces as '▁' (Replace), after a '▁' put in front
// (Prepend) where the model adds a space prefix (Llama 2, Mistral; Gemma does not).
void read_sentencepiece_normalizer(const Json& normalizer, Vocab& vocab) {
  const Json steps = type_of(normalizer) == "Sequence" ? normalizer.value("normalizers", Json::array())
                                                       : Json::array({normalizer});
  bool replaces = false;
  for (const Json& step : steps) {
    if (type_of(step) == "Prepend" && step.value("prepend", "") == kSpaceMark && !replaces) {
      vocab.add_space_prefix = true;
    } else if (type_of(step) == "Replace" && is_string_pattern(step, "pattern", " ") &&
               step.value("content", "") == kSpaceMark) {
      replaces = true;
    } else {
      fail("unsupported normalizer step " + step.dump() + " for a byte_fallback BPE (supported: Prepend '\u2581', "
           "Replace ' ' by '\u2581')");
    }
  }
  if (!replaces) fail("a byte_fallback BPE needs a normalizer that replaces ' ' by '\u2581': " + normalizer.dump());
}

// After the normalizer, no space is left for a Split on " " to cut at (Gemma's pre-tokenizer).
void read_sentencepiece_pre_tokenizer(const Json& pre_tokenizer) {
  if (pre_tokenizer.is_null()) return;
  if (type_of(pre_tokenizer) == "Split" && is_string_pattern(pre_tokenizer, "pattern", " ") &&
      !is_set(pre_tokenizer, "invert"))
    return;
  fail("unsupported pre_tokenizer " + pre_tokenizer.dump() + " for a byte_fallback BPE (supported: null, Split on ' ')");
}

// Replace '▁' by ' ', ByteFallback, Fuse, and Strip(' ', 1, 0) exactly where a prefix was added.
void read_sentencepiece_decoder(const Json& decoder, const Vocab& vocab) {
  const Json steps = decoder.value("decoders", Json::array());
  bool strips = false;
  size_t i = 0;
  const bool sequence = type_of(decoder) == "Sequence" && steps.size() >= 3 && type_of(steps[0]) == "Replace" &&
                        is_string_pattern(steps[0], "pattern", kSpaceMark) && steps[0].value("content", "") == " " &&
                        type_of(steps[1]) == "ByteFallback" && type_of(steps[2]) == "Fuse";
  if (sequence) {
    for (i = 3; i < steps.size(); ++i) {
      const Json& step = steps[i];
      if (type_of(step) == "Strip" && step.value("content", "") == " " && step.value("start", 0) == 1 &&
          step.value("stop", 0) == 0 && !strips)
        strips = true;
      else
        break;
    }
  }
  if (!sequence || i != steps.size())
    fail("unsupported decoder " + decoder.dump() + " for a byte_fallback BPE (supported: Sequence of Replace "
         "'\u2581' by ' ', ByteFallback, Fuse, and Strip(' ', 1, 0) with a Prepend normalizer)");
  if (strips != vocab.add_space_prefix)
    fail("the decoder " + std::string(strips ? "strips" : "does not strip") + " a leading space the normalizer " +
         (vocab.add_space_prefix ? "puts in front" : "does not add"));
}

// GGUF's SentencePiece scores for a vocabulary that came with merges (vocab_to_gguf needs one a
// token): a piece's score falls with its id, as the merges were learned; pieces of '▁' alone
// score lowest, as in Llama 2's own file; other tokens 0. With them llama.cpp's score-ranked
// merges give Hugging Face's ids.
std::vector<float> sentencepiece_scores(const Vocab& vocab) {
  std::vector<float> scores(vocab.tokens.size(), 0.0f);
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    const Token& token = vocab.tokens[id];
    if (token.type != TokenType::kNormal) continue;
    bool only_marks = !token.piece.empty();
    for (size_t at = 0; at < token.piece.size() && only_marks; at += kSpaceMark.size())
      only_marks = token.piece.substr(at, kSpaceMark.size()) == kSpaceMark;
    scores[id] = only_marks ? -1e9f : -static_cast<float>(id);
  }
  return scores;
}

PreSplit read_pre_tokenizer(const Json& pre_tokenizer) {
  const bool is_sequence = type_of(pre_tokenizer) == "Sequence";
  const Json steps = is_sequence ? pre_tokenizer.value("pretokenizers", Json::array()) : Json::array();
  if (steps.size() != 2 || type_of(steps[0]) != "Split" || type_of(steps[1]) != "ByteLevel")
    fail("unsupported pre_tokenizer " + pre_tokenizer.dump() + " (supported: Sequence of Split and ByteLevel)");
  const Json& split = steps[0];
  const Json& byte_level = steps[1];
  // Removed with invert keeps the matches and drops the text between them: none, as every
  // supported regex matches every character (GPT-4o's tokenizer.json says it so).
  const bool isolated = split.value("behavior", "") == "Isolated" && !is_set(split, "invert");
  const bool kept_matches = split.value("behavior", "") == "Removed" && split.value("invert", false) == true;
  if (!isolated && !kept_matches)
    fail("the Split pre-tokenizer must have behavior Isolated (invert false) or Removed (invert true): " +
         split.dump());
  if (is_set(byte_level, "add_prefix_space") || is_set(byte_level, "use_regex"))
    fail("the ByteLevel pre-tokenizer must have add_prefix_space and use_regex false: " + byte_level.dump());
  const Json& pattern = split.value("pattern", Json::object());
  if (!pattern.contains("Regex") || !pattern["Regex"].is_string())
    fail("the Split pre-tokenizer needs a Regex pattern: " + split.dump());
  return pre_split_from_hf_regex(pattern["Regex"].get<std::string>());
}

std::vector<MergePieces> read_merges(const Json& merges) {
  std::vector<MergePieces> pieces;
  pieces.reserve(merges.size());
  for (const Json& merge : merges) {
    if (merge.is_string()) {
      pieces.push_back(split_merge_string(merge.get<std::string>()));
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
      pieces.push_back({merge[0].get<std::string>(), merge[1].get<std::string>()});
    } else {
      fail("bad merge " + merge.dump() + ": expected \"a b\" or [\"a\", \"b\"]");
    }
  }
  return pieces;
}

void set_token(Vocab& vocab, std::vector<bool>& filled, int64_t id, std::string piece, TokenType type) {
  if (id < 0 || id > INT32_MAX) fail("token id " + std::to_string(id) + " is out of range");
  const auto index = static_cast<size_t>(id);
  if (index >= vocab.tokens.size()) {
    vocab.tokens.resize(index + 1);
    filled.resize(index + 1, false);
  }
  if (filled[index] && vocab.tokens[index].piece != piece)
    fail("id " + std::to_string(id) + " is both '" + vocab.tokens[index].piece + "' and '" + piece + "'");
  vocab.tokens[index] = {std::move(piece), type};
  filled[index] = true;
}

void read_model(const Json& model, Vocab& vocab, std::vector<bool>& filled) {
  if (type_of(model) != "BPE") fail("unsupported model type '" + type_of(model) + "' (supported: BPE)");
  if (is_set(model, "continuing_subword_prefix") || is_set(model, "end_of_word_suffix") || is_set(model, "dropout"))
    fail("unsupported BPE options (continuing_subword_prefix, end_of_word_suffix or dropout)");
  // byte_fallback: characters without a piece become <0xNN> tokens, SentencePiece's way.
  if (is_set(model, "byte_fallback")) vocab.kind = VocabKind::kSentencePiece;
  vocab.ignore_merges = model.value("ignore_merges", false);
  const bool sentencepiece = vocab.kind == VocabKind::kSentencePiece;
  for (const auto& [piece, id] : model.at("vocab").items()) {
    TokenType type = TokenType::kNormal;
    if (sentencepiece && byte_token_value(piece)) type = TokenType::kByte;
    set_token(vocab, filled, id.get<int64_t>(), piece, type);
  }
  if (sentencepiece && model.contains("unk_token") && model["unk_token"].is_string()) {
    const std::string unk = model["unk_token"].get<std::string>();
    const auto it = model.at("vocab").find(unk);
    if (it == model.at("vocab").end()) fail("unk_token '" + unk + "' is not in the vocabulary");
    vocab.unknown_id = static_cast<int32_t>(it->get<int64_t>());
  }
}

void read_added_tokens(const Json& added_tokens, Vocab& vocab, std::vector<bool>& filled) {
  for (const Json& added : added_tokens) {
    std::string content = added.at("content").get<std::string>();
    if (is_set(added, "lstrip") || is_set(added, "rstrip") || is_set(added, "single_word"))
      fail("added token '" + content + "' uses lstrip, rstrip or single_word, which are not supported");
    const bool control = added.value("special", false) || looks_special(content);
    set_token(vocab, filled, added.at("id").get<int64_t>(), std::move(content),
              control ? TokenType::kControl : TokenType::kUserDefined);
  }
}

std::optional<int32_t> find_piece(const Vocab& vocab, std::string_view piece) {
  for (size_t id = 0; id < vocab.tokens.size(); ++id)
    if (vocab.tokens[id].piece == piece) return static_cast<int32_t>(id);
  return std::nullopt;
}

int32_t id_of_named_token(const Vocab& vocab, const std::string& piece, const char* role) {
  const auto id = find_piece(vocab, piece);
  if (!id) fail(std::string(role) + " '" + piece + "' is not a token");
  return *id;
}

// A TemplateProcessing post-processor (alone or in a Sequence) that puts special tokens
// around a single sequence, as Llama 3.1 adds <|begin_of_text|>.
void read_post_processor(const Json& processor, Vocab& vocab) {
  if (type_of(processor) == "Sequence") {
    for (const Json& step : processor.value("processors", Json::array())) read_post_processor(step, vocab);
    return;
  }
  if (type_of(processor) != "TemplateProcessing") return;
  const Json& single = processor.value("single", Json::array());
  if (single.empty()) return;
  const auto special_piece = [](const Json& item) -> std::optional<std::string> {
    if (!item.contains("SpecialToken")) return std::nullopt;
    return item["SpecialToken"].at("id").get<std::string>();
  };
  if (const auto first = special_piece(single.front())) {
    vocab.add_bos = true;
    vocab.bos_id = id_of_named_token(vocab, *first, "post_processor token");
  }
  if (special_piece(single.back())) vocab.add_eos = true;
}

// bos_token etc. are a string, an AddedToken object with "content", or null.
std::optional<std::string> config_token(const Json& config, const char* key) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  return it->at("content").get<std::string>();
}

void read_config(const Json& config, Vocab& vocab) {
  if (const auto bos = config_token(config, "bos_token")) vocab.bos_id = id_of_named_token(vocab, *bos, "bos_token");
  if (const auto eos = config_token(config, "eos_token")) vocab.eos_id = id_of_named_token(vocab, *eos, "eos_token");
  if (const auto pad = config_token(config, "pad_token"))
    vocab.padding_id = id_of_named_token(vocab, *pad, "pad_token");
  if (config.contains("add_bos_token") && config["add_bos_token"].is_boolean()) vocab.add_bos = config["add_bos_token"];
  if (config.contains("add_eos_token") && config["add_eos_token"].is_boolean()) vocab.add_eos = config["add_eos_token"];
}

std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace

Vocab vocab_from_hf_json(std::string_view tokenizer_json, std::string_view tokenizer_config_json) {
  const Json root = Json::parse(tokenizer_json);
  Vocab vocab;
  std::vector<bool> filled;
  read_model(root.at("model"), vocab, filled);
  read_added_tokens(root.value("added_tokens", Json::array()), vocab, filled);
  for (size_t id = 0; id < vocab.tokens.size(); ++id)
    if (!filled[id]) vocab.tokens[id] = {padding_piece(id), TokenType::kUnused};
  vocab.merges = resolve_merges(vocab.tokens, read_merges(root.at("model").at("merges")));

  if (vocab.kind == VocabKind::kSentencePiece) {
    read_sentencepiece_normalizer(root.value("normalizer", Json()), vocab);
    read_sentencepiece_pre_tokenizer(root.value("pre_tokenizer", Json()));
    read_sentencepiece_decoder(root.value("decoder", Json()), vocab);
    vocab.scores = sentencepiece_scores(vocab);
  } else {
    vocab.normalization = read_normalizer(root.value("normalizer", Json()));
    vocab.pre_split = read_pre_tokenizer(root.value("pre_tokenizer", Json()));
    if (type_of(root.value("decoder", Json())) != "ByteLevel")
      fail("unsupported decoder " + root.value("decoder", Json()).dump() + " (supported: ByteLevel)");
  }
  read_post_processor(root.value("post_processor", Json()), vocab);
  if (!tokenizer_config_json.empty()) read_config(Json::parse(tokenizer_config_json), vocab);
  vocab.check_ids();
  return vocab;
}

Vocab load_hf_vocab(const std::filesystem::path& tokenizer_json) {
  const std::filesystem::path config = tokenizer_json.parent_path() / "tokenizer_config.json";
  return vocab_from_hf_json(read_whole_file(tokenizer_json),
                            std::filesystem::exists(config) ? read_whole_file(config) : std::string());
}

}  // namespace nanoserve::tokenizer
