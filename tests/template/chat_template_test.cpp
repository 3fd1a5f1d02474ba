// ChatTemplate's interface, its error messages, and the limits that keep hostile templates
// and inputs from crashing or hanging the process (the Jinja semantics themselves are
// checked against Python in jinja_semantics_test.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "template/chat_template.h"

namespace nanoserve::templates {
namespace {

using Json = nlohmann::ordered_json;

std::string render(const std::string& source, const Json& variables = Json::object()) {
  ChatTemplateInputs inputs;
  inputs.extra = variables;
  return ChatTemplate(source, "<s>", "</s>").render(inputs);
}

// The message of the ChatTemplateError that parsing or rendering `source` throws.
std::string error_of(const std::string& source, const Json& variables = Json::object()) {
  try {
    render(source, variables);
  } catch (const ChatTemplateError& e) {
    return e.what();
  }
  return "(no error)";
}

struct ErrorCase {
  std::string source;
  std::string message;  // expected within the error
};

void expect_errors(const std::vector<ErrorCase>& cases) {
  for (const ErrorCase& c : cases) {
    const std::string message = error_of(c.source);
    EXPECT_NE(message.find(c.message), std::string::npos) << c.source << "\n  gave: " << message;
  }
}

TEST(ChatTemplateErrors, ParseErrorsSayLineColumnAndWhatWasExpected) {
  expect_errors({
      {"{% for x in y %}", "line 1:17: unexpected end of template, expected 'else' or 'endfor'"},
      {"{% if x %}a{% else %}b", "line 1:23: unexpected end of template, expected 'endif'"},
      {"{{ x + }}", "line 1:8: expected an expression, found '}}'"},
      {"a\nb {{ ) }}", "line 2:6: unexpected ')'"},
      {"{{ [1, 2 }}", "line 1:10: unexpected '}', expected ']'"},
      {"{{ (1", "line 1:4: unclosed '('"},
      {"{{ x", "line 1:1: unclosed tag, expected '}}'"},
      {"{% for x in y %}{% endif %}", "line 1:20: unexpected tag 'endif', expected 'else' or 'endfor'"},
      {"{% call f() %}{% endcall %}", "line 1:4: unknown tag 'call'"},
      {"{% endfor %}", "line 1:4: unknown tag 'endfor'"},
      {"{% break %}", "line 1:4: 'break' outside of a loop"},
      {"{% for x in y %}{% endfor %}{% continue %}", "line 1:32: 'continue' outside of a loop"},
      {"{{ x | nofilter }}", "line 1:8: no filter named 'nofilter'"},
      {"{{ x is nottest }}", "line 1:9: no test named 'nottest'"},
      {"{{ 'abc }}", "line 1:4: unclosed string literal"},
      {"{# abc", "line 1:1: unclosed comment, expected '#}'"},
      {"{{ f(a=1, 2) }}", "line 1:11: positional argument follows keyword argument"},
      {"{{ '\\u12' }}", "line 1:5: truncated \\u escape"},
      {"{{ 99999999999999999999 }}", "line 1:4: number out of range"},
      {"{% set %}", "line 1:8: expected a variable name, found '%}'"},
      {"{% for x y %}", "line 1:10: expected 'in', found 'y'"},
      {"\xc3\xa9\xc3\xa9{{ $ }}", "line 1:6: unexpected character '$'"},  // columns count characters
  });
}

TEST(ChatTemplateErrors, RenderErrorsSayWhereAndWhat) {
  expect_errors({
      {"{{ x.y }}", "line 1:4: 'x' is undefined"},
      {"{% set d = {} %}\n  {{ d.a.b }}", "line 2:6: 'dict object' has no attribute 'a'"},
      {"{{ 'a' + 1 }}", "line 1:4: can only concatenate str (not \"int\") to str"},
      {"{{ 1 // 0 }}", "line 1:4: integer division or modulo by zero"},
      {"{% for a, b in [[1, 2, 3]] %}{% endfor %}", "too many values to unpack (expected 2, got 3)"},
      {"{{ undefined_thing | tojson }}", "Object of type Undefined is not JSON serializable"},
      {"{% set x = 1 %}{% set x.a = 2 %}", "cannot assign attribute on non-namespace object 'x'"},
      {"{{ 'x' in none }}", "argument of type 'NoneType' is not iterable"},
      {"{{ 1 < 'a' }}", "'<' not supported between instances of 'int' and 'str'"},
      {"{{ 9223372036854775807 + 1 }}", "integer overflow"},
      {"{{ {'a': 1}.pop('a') }}", "dict.pop() is not supported"},
      {"{{ 5() }}", "'int' object is not callable"},
      {"{{ 'a b'.split(maxsplit=1, sep=' ', x=2) }}", "split() got an unexpected keyword argument 'x'"},
      {"{% for x in 5 %}{% endfor %}", "'int' object is not iterable"},
  });
}

TEST(ChatTemplateErrors, RaiseExceptionGivesTheTemplatesMessageAlone) {
  const std::string source =
      "{% for m in messages %}{% if m.role not in ['user', 'assistant'] %}"
      "{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}";
  ChatTemplateInputs inputs;
  inputs.messages = Json::parse(R"([{"role": "user", "content": "a"}, {"role": "tool", "content": "b"}])");
  try {
    ChatTemplate(source, "", "").render(inputs);
    FAIL() << "no error";
  } catch (const ChatTemplateError& e) {
    EXPECT_STREQ(e.what(), "Only user and assistant roles are supported!");
  }
}

// Each must fail with its message, quickly, without crashing.
TEST(ChatTemplateLimits, HostileTemplatesFailCleanly) {
  const auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  const auto started = std::chrono::steady_clock::now();
  expect_errors({
      {"{{ " + repeat("(", 10000) + "1" + repeat(")", 10000) + " }}", "nests deeper than the limit"},
      {"{{ a" + repeat(".a", 10000) + " }}", "nests deeper than the limit"},
      {"{{ 1" + repeat(" + 1", 10000) + " }}", "nests deeper than the limit"},
      {"{{ " + repeat("not ", 10000) + "x }}", "nests deeper than the limit"},
      {repeat("{% if true %}", 10000) + repeat("{% endif %}", 10000), "nests deeper than the limit"},
      {"{{ 'x' * 100000000 }}", "a string grew past the limit of 64 MiB"},
      {"{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
       "a string grew past the limit of 64 MiB"},
      {"{% for i in range(1000000) %}{{ 'x' * 1000 }}{% endfor %}", "a string grew past the limit of 64 MiB"},
      // A tree of shared lists: small in memory, 2^200 leaves when printed.
      {"{% set ns = namespace(l=1) %}{% for i in range(200) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}"
       "{{ ns.l | tojson }}",
       "a string grew past the limit of 64 MiB"},
      {"{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
       "a list grew past the limit of 1048576 items"},
      {"{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = [ns.l] %}{% endfor %}",
       "lists and dicts nest deeper than the limit of 256"},
      {"{{ range(1000000000000) | length }}", "range() longer than the limit"},
      {"{{ ('x' * 60000000) | list | length }}", "a string too long to iterate over"},
      {"{% set ns = namespace() %}{% set ns.me = [ns] %}", "a namespace cannot hold a namespace"},
      {"{% set x = 'y' * 60000000 %}{% for i in range(100) %}{% set y = x %}{% endfor %}",
       "the template copied more than 1 GiB of strings"},
      {"{% for i in range(1000000) %}{% for j in range(1000000) %}{% endfor %}{% endfor %}",
       "the template ran more than 10000000 steps"},
  });
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::minutes(2));
}

TEST(ChatTemplateLimits, HostileInputsFailCleanly) {
  // Nested 100000 deep: converting it must not recurse that far.
  Json deep = Json::array();
  for (int i = 0; i < 100000; ++i) deep = Json::array({std::move(deep)});
  ChatTemplateInputs inputs;
  inputs.messages = Json::array({{{"role", "user"}, {"content", std::move(deep)}}});
  try {
    ChatTemplate::chatml().render(inputs);
    FAIL() << "no error";
  } catch (const ChatTemplateError& e) {
    EXPECT_NE(std::string(e.what()).find("input JSON nests deeper than the limit of 256"), std::string::npos)
        << e.what();
  }
}

TEST(ChatTemplateLimits, LongConversationsRender) {
  ChatTemplateInputs inputs;
  for (int i = 0; i < 20000; ++i)
    inputs.messages.push_back({{"role", i % 2 ? "assistant" : "user"}, {"content", "message " + std::to_string(i)}});
  inputs.messages.push_back({{"role", "user"}, {"content", std::string(10'000'000, 'x')}});
  const std::string prompt = ChatTemplate::chatml().render(inputs);
  EXPECT_GT(prompt.size(), 10'000'000u);
  EXPECT_EQ(prompt.substr(prompt.size() - 22), "<|im_start|>assistant\n");
}

TEST(ChatTemplate, SeesBosEosAndInputsAsVariables) {
  const std::string source =
      "{{ bos_token }}|{{ eos_token }}|{{ messages | length }}|{{ tools is none }}|{{ add_generation_prompt }}|"
      "{{ enable_thinking }}|{{ documents is defined }}";
  ChatTemplateInputs inputs;
  inputs.messages = Json::array({{{"role", "user"}, {"content", "hi"}}});
  inputs.extra = {{"enable_thinking", false}};
  EXPECT_EQ(ChatTemplate(source, "<s>", "</s>").render(inputs), "<s>|</s>|1|True|True|False|False");
  inputs.tools = Json::array();
  inputs.add_generation_prompt = false;
  EXPECT_EQ(ChatTemplate(source, "<s>", "</s>").render(inputs), "<s>|</s>|1|False|False|False|False");
}

TEST(ChatTemplate, AnEmptyTokenIsUndefinedAndExtraOverrides) {
  const ChatTemplate chat_template("{{ bos_token is defined }}|{{ eos_token }}|{{ add_generation_prompt }}", "", "E");
  ChatTemplateInputs inputs;
  EXPECT_EQ(chat_template.render(inputs), "False|E|True");
  inputs.extra = {{"eos_token", "X"}, {"add_generation_prompt", false}};
  EXPECT_EQ(chat_template.render(inputs), "False|X|False");
  inputs.extra = Json::array();
  EXPECT_THROW(chat_template.render(inputs), ChatTemplateError);
}

TEST(ChatTemplate, ChatMlIsTheFallback) {
  ChatTemplateInputs inputs;
  inputs.messages = Json::parse(R"([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])");
  EXPECT_EQ(ChatTemplate::chatml().render(inputs),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n");
  inputs.add_generation_prompt = false;
  EXPECT_EQ(ChatTemplate::chatml().render(inputs), "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n");
}

TEST(ChatTemplate, StrftimeNowUsesTheFixedDateOrTheClock) {
  ChatTemplate chat_template("{{ strftime_now('%d %b %Y') }}|{{ strftime_now('') }}", "", "");
  std::tm date{};
  date.tm_year = 2024 - 1900;
  date.tm_mon = 6;
  date.tm_mday = 26;
  chat_template.set_fixed_now(date);
  EXPECT_EQ(chat_template.render({}), "26 Jul 2024|");

  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  const std::string year = std::to_string(local.tm_year + 1900);
  EXPECT_EQ(ChatTemplate("{{ strftime_now('%Y') }}", "", "").render({}), year);  // fails only across New Year
}

TEST(ChatTemplate, CopiesShareTheParsedTemplateAndRenderConcurrently) {
  const ChatTemplate original(
      "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ m.content }}{% endfor %}"
      "{{ ns.n }}",
      "", "");
  ChatTemplateInputs inputs;
  for (int i = 0; i < 1000; ++i) inputs.messages.push_back({{"content", "m"}});
  const std::string expected = std::string(1000, 'm') + "1000";
  std::vector<std::future<std::string>> renders;
  for (int t = 0; t < 4; ++t) {
    const ChatTemplate copy = original;
    renders.push_back(std::async(std::launch::async, [copy, &inputs] { return copy.render(inputs); }));
  }
  for (auto& r : renders) EXPECT_EQ(r.get(), expected);
}

}  // namespace
}  // namespace nanoserve::templates
