// The interpreter against Python Jinja2 3.1.6, configured as Hugging Face's
// apply_chat_template configures it (trim_blocks, lstrip_blocks, loop controls, HF's tojson,
// raise_exception; `generation` renders its body). Each expected output below is what
// Jinja2 printed for the template and variables beside it; the renders also get
// messages=[], tools=None, add_generation_prompt=True, bos_token "<s>", eos_token "</s>".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "template/chat_template.h"

namespace nanoserve::templates {
namespace {

struct Case {
  const char* source;
  const char* variables;  // JSON object
  const char* expected;
};

const std::vector<Case> kWhitespaceControl = {
    {"a  {%- if true %}b{% endif -%}  c",
     "{}",
     "abc"},
    {"{% if true %}\nx\n{% endif %}\ny",
     "{}",
     "x\ny"},
    {"  {% if true %}x{% endif %}",
     "{}",
     "x"},
    {"a  {% if true %}x{% endif %}",
     "{}",
     "a  x"},
    {"  {{ 'x' }}",
     "{}",
     "  x"},
    {"  {%+ if true %}x{% endif %}",
     "{}",
     "  x"},
    {"{% if true +%}\nx{% endif %}",
     "{}",
     "\nx"},
    {"a {# c #} b",
     "{}",
     "a  b"},
    {"a\n  {# c #}\nb",
     "{}",
     "a\nb"},
    {"a\n  {#- c -#}  \nb",
     "{}",
     "ab"},
    {"x\n",
     "{}",
     "x"},
    {"x\n\n",
     "{}",
     "x\n"},
    {"a\r\nb\rc",
     "{}",
     "a\nb\nc"},
    {"{{ 'a' -}}\n\n  b",
     "{}",
     "ab"},
    {"a\n   {%- if true %}b{% endif %}",
     "{}",
     "ab"},
    {"\t {% for i in [1,2] %}\n\t{{ i }}\n {% endfor %}\n",
     "{}",
     "\t1\n\t2\n"},
    {"{% if true %}  {% endif %}|",
     "{}",
     "  |"},
    {"x {%- if true -%} \n\n y {%- endif %}",
     "{}",
     "xy"},
    {"\u3000 {% if true %}x{% endif %}",
     "{}",
     "x"},
    {"a\u00a0 {%- if true %}x{% endif %}",
     "{}",
     "ax"},
    {"{{ '}}' }}{{ '%}' }}{% if '%}' %}ok{% endif %}",
     "{}",
     "}}%}ok"},
    {"{%- generation %}\n  {{- 'in' }}\n{% endgeneration -%}\n",
     "{}",
     "in\n"},
};

const std::vector<Case> kLoops = {
    {"{% for i in [1,2,3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}{{ loop.revindex0 }} {% endfor %}",
     "{}",
     "10TrueFalse332 21FalseFalse321 32FalseTrue310 "},
    {"{% for x in [1,2,3] %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}",
     "{}",
     "-2;1-3;2-;"},
    {"{% for i in [1,2,3,4] if i is even %}{{ i }}:{{ loop.index }}/{{ loop.length }} {% endfor %}",
     "{}",
     "2:1/2 4:2/2 "},
    {"{% for i in [] %}x{% else %}empty{% endfor %}",
     "{}",
     "empty"},
    {"{% for i in [1,2,3,4] %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}",
     "{}",
     "12"},
    {"{% for i in [1,2,3,4] %}{% if i is odd %}{% continue %}{% endif %}{{ i }}{% endfor %}",
     "{}",
     "24"},
    {"{% for i in range(3) %}{% for j in range(2) %}{% if j == 1 %}{% break %}{% endif %}{{ i }}{{ j }} {% endfor %}{% endfor %}",
     "{}",
     "00 10 20 "},
    {"{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",
     "{\"d\": {\"b\": 1, \"a\": [1, \"x\"]}}",
     "b=1;a=[1, 'x'];"},
    {"{% for k in d %}{{ k }}{% endfor %}",
     "{\"d\": {\"b\": 1, \"a\": 2}}",
     "ba"},
    {"{% for c in 'héllo' %}{{ c }}.{% endfor %}",
     "{}",
     "h.é.l.l.o."},
    {"{% for a in [[1,2],[3,4]] %}{% for b in a %}{{ loop.index }}{{ b }}{% endfor %}{{ loop.index }}{% endfor %}",
     "{}",
     "1122113242"},
    {"{% for x in undefined_thing %}x{% endfor %}ok",
     "{}",
     "ok"},
    {"{% set x = 0 %}{% for i in [1,2] %}{{ x }}{% set x = i %}{{ x }}{% endfor %}{{ x }}",
     "{}",
     "01020"},
    {"{% for i in [1] %}{% set z = 5 %}{% endfor %}{{ z is defined }}",
     "{}",
     "False"},
    {"{% if true %}{% set z = 5 %}{% endif %}{{ z }}",
     "{}",
     "5"},
    {"{% for i in [3, 4] %}{% set i = i * 10 %}{{ i }}{% endfor %}",
     "{}",
     "3040"},
    {"{% set a, b = [1, 2] %}{{ a }}{{ b }}{% set c = 1, 2 %}{{ c }}",
     "{}",
     "12(1, 2)"},
    {"{% set x %}inner {{ 1 }}{% endset %}[{{ x }}]",
     "{}",
     "[inner 1]"},
};

const std::vector<Case> kNamespace = {
    {"{% set ns = namespace(a=1, b='x') %}{% for i in [1,2] %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }}{{ ns.b }}",
     "{}",
     "4x"},
    {"{% set ns = namespace(found=false) %}{% for m in msgs %}{% if m.role == 'system' %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }}",
     "{\"msgs\": [{\"role\": \"user\"}, {\"role\": \"system\"}]}",
     "True"},
    {"{% set ns = namespace() %}{% set ns.items = [] %}{% for i in [1,2] %}{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.items }}{{ ns.missing is defined }}",
     "{}",
     "[1, 2]False"},
    {"{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}{{ ns['a'] }}",
     "{}",
     "121"},
};

const std::vector<Case> kSubscriptsAndSlices = {
    {"{{ 'abcdef'[::-1] }}|{{ 'abcdef'[1:4] }}|{{ 'abcdef'[-2:] }}|{{ 'abcdef'[::2] }}|{{ 'abcdef'[10:] }}|{{ 'abcdef'[:-10] }}",
     "{}",
     "fedcba|bcd|ef|ace||"},
    {"{{ [1,2,3][::-1] }}|{{ [1,2,3,4,5][4:1:-2] }}|{{ [1,2,3][1:] }}|{{ [1,2,3][:-1] }}|{{ [1,2,3][:] }}|{{ [1,2,3][::-2] }}|{{ (1,2,3)[1:] }}",
     "{}",
     "[3, 2, 1]|[5, 3]|[2, 3]|[1, 2]|[1, 2, 3]|[3, 1]|(2, 3)"},
    {"{{ 'héllo'[1] }}|{{ 'héllo'|length }}|{{ 'héllo'[::-1] }}|{{ '😀ab'[-1] }}",
     "{}",
     "é|5|olléh|b"},
    {"{{ l[0] }}|{{ l[-1] }}|{{ l[5] }}|{{ l[-5] }}|{{ 'abc'[5] }}|{{ d['k'] }}|{{ d.k }}|{{ d['z'] }}|{{ d.z }}|{{ x.0 }}",
     "{\"l\": [1, 2], \"d\": {\"k\": \"v\"}, \"x\": [\"first\"]}",
     "1|2||||v|v|||first"},
    {"{{ m.content.split('</think>')[-1].lstrip('\\n') }}",
     "{\"m\": {\"content\": \"<think>a</think>\\n\\nanswer\"}}",
     "answer"},
    {"{{ {'a': {'b': 1}}['a']['b'] }}{{ {'a':1}}}",
     "{}",
     "1{'a': 1}"},
    {"{{ d['items'] }}|{{ d.items is defined }}",
     "{\"d\": {\"items\": 5}}",
     "5|True"},
};

const std::vector<Case> kFilters = {
    {"{{ '  x  ' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ s | trim }}|{{ none | trim }}",
     "{\"s\": \"\u3000\u00a0 x y\u2003\\n\"}",
     "x|a|x y|None"},
    {"{{ [1,2,3] | length }}|{{ 'héllo' | length }}|{{ {'a':1} | length }}|{{ undefined_thing | length }}|{{ 'ab' | count }}",
     "{}",
     "3|5|1|0|2"},
    {"{{ [1,2,3] | first }}|{{ [1,2,3] | last }}|{{ 'abc' | first }}|{{ [] | first }}|",
     "{}",
     "1|3|a||"},
    {"{{ 'abc' | list }}|{{ d | list }}|{{ d | items | list }}|{{ undefined_thing | items | list }}",
     "{\"d\": {\"k\": 1, \"j\": 2}}",
     "['a', 'b', 'c']|['k', 'j']|[('k', 1), ('j', 2)]|[]"},
    {"{{ [1,2] | join(', ') }}|{{ [1,'a',none] | join }}|{{ l | join(',', attribute='a.b') }}",
     "{\"l\": [{\"a\": {\"b\": 1}}, {\"a\": {\"b\": 2}}]}",
     "1, 2|1aNone|1,2"},
    {"{{ x | default('dflt') }}|{{ none | default('n') }}|{{ '' | default('e', true) }}|{{ 0 | d('z', true) }}|{{ 'v' | default('w') }}",
     "{}",
     "dflt|None|e|z|v"},
    {"{{ 'aB' | upper }}|{{ 'aB' | lower }}|{{ 'hello' | capitalize }}|{{ 'hELLO wORLD' | title }}|{{ 5 | string }}|{{ [1] | string }}",
     "{}",
     "AB|ab|Hello|Hello World|5|[1]"},
    {"{{ '42' | int + 1 }}|{{ 'x' | int }}|{{ 'x' | int(7) }}|{{ 1.9 | int }}|{{ '3.7' | int }}|{{ ' 12 ' | int }}|{{ true | int }}|{{ '1_000' | int }}|{{ 'ff' | int(base=16) }}|{{ none | int }}",
     "{}",
     "43|0|7|1|3|12|1|1000|255|0"},
    {"{{ 2 | float }}|{{ '2.5' | float }}|{{ 'q' | float }}|{{ -3 | abs }}|{{ -2.5 | abs }}",
     "{}",
     "2.0|2.5|0.0|3|2.5"},
    {"{{ 'a-b-c' | replace('-', '+') }}|{{ 'a-b-c' | replace('-', '', 1) }}",
     "{}",
     "a+b+c|ab-c"},
    {"{{ [3,1,2] | reverse | list }}|{{ 'abc' | reverse }}|{{ 'x' | safe }}",
     "{}",
     "[2, 1, 3]|cba|x"},
    {"{{ msgs | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(',') }}|{{ msgs | rejectattr('role', 'equalto', 'user') | list | length }}|{{ msgs | map(attribute='role') | list }}|{{ msgs | selectattr('tool_calls') | list | length }}|{{ msgs | selectattr('tool_calls', 'defined') | list | length }}",
     "{\"msgs\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", \"content\": \"b\", \"tool_calls\": [1]}, {\"role\": \"user\", \"content\": \"c\"}]}",
     "a,c|1|['user', 'assistant', 'user']|1|1"},
    {"{{ [1,2,3,4] | select('odd') | list }}|{{ [1,2,3,4] | reject('odd') | list }}|{{ [1,2,3] | select('gt', 1) | list }}|{{ ['a','b'] | map('upper') | list }}|{{ l | map(attribute='x', default='?') | list }}",
     "{\"l\": [{\"x\": 1}, {}]}",
     "[1, 3]|[2, 4]|[2, 3]|['A', 'B']|[1, '?']"},
};

const std::vector<Case> kToJson = {
    {"{{ d | tojson }}",
     "{\"d\": {\"b\": [1, 2.5, null, true, false], \"a\": \"é\\\"\\\\\\n\\t\\u0001</script>&\", \"c\": {}, \"e\": []}}",
     "{\"b\": [1, 2.5, null, true, false], \"a\": \"é\\\"\\\\\\n\\t\\u0001</script>&\", \"c\": {}, \"e\": []}"},
    {"{{ d | tojson(indent=2) }}",
     "{\"d\": {\"b\": [1, 2.5, null, true], \"a\": \"x\", \"c\": {}, \"e\": [], \"f\": {\"g\": [{}]}}}",
     "{\n  \"b\": [\n    1,\n    2.5,\n    null,\n    true\n  ],\n  \"a\": \"x\",\n  \"c\": {},\n  \"e\": [],\n  \"f\": {\n    \"g\": [\n      {}\n    ]\n  }\n}"},
    {"{{ d | tojson(ensure_ascii=true) }}|{{ d | tojson(sort_keys=true) }}|{{ d | tojson(separators=(',', ':')) }}",
     "{\"d\": {\"z\": \"é😀\x7f""\u2028\", \"a\": 1}}",
     "{\"z\": \"\\u00e9\\ud83d\\ude00\\u007f\\u2028\", \"a\": 1}|{\"a\": 1, \"z\": \"é😀\x7f""\u2028\"}|{\"z\":\"é😀\x7f""\u2028\",\"a\":1}"},
    {"{{ d | tojson(indent='\\t') }}|{{ d | tojson(indent=0) }}",
     "{\"d\": {\"a\": [1]}}",
     "{\n\t\"a\": [\n\t\t1\n\t]\n}|{\n\"a\": [\n1\n]\n}"},
    {"{{ l | tojson }}",
     "{\"l\": [1.0, 1e+16, 1e-07, 123.456, -0.0, 0.1, 9223372036854775807]}",
     "[1.0, 1e+16, 1e-07, 123.456, -0.0, 0.1, 9223372036854775807]"},
    {"{{ 'plain' | tojson }}|{{ none | tojson }}|{{ (1, 'a') | tojson }}|{{ 3 | tojson }}",
     "{}",
     "\"plain\"|null|[1, \"a\"]|3"},
    {"{{ t[0] | tojson }}",
     "{\"t\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"description\": \"Ünïcödé 東京 \\\"q\\\"\", \"parameters\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\", \"default\": 5}}, \"required\": [\"a\"]}}}]}",
     "{\"type\": \"function\", \"function\": {\"name\": \"f\", \"description\": \"Ünïcödé 東京 \\\"q\\\"\", \"parameters\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\", \"default\": 5}}, \"required\": [\"a\"]}}}"},
};

const std::vector<Case> kStringMethods = {
    {"{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.rsplit(' ', 1) }}|{{ 'a b c'.split(none, 1) }}|{{ '  a b  '.rsplit(none, 1) }}|{{ 'aaa'.rsplit('aa', 1) }}|{{ 'aaa'.split('aa') }}",
     "{}",
     "['a', 'b', '', 'c']|['a', 'b']|['a b', 'c']|['a', 'b c']|['  a', 'b']|['a', '']|['', 'a']"},
    {"{{ '  x \\n'.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '\\n\\n  x'.lstrip('\\n') }}|{{ 'x  \\n'.rstrip('\\n') }}|{{ '\\t x'.lstrip() }}|{{ 'ab'.strip('') }}",
     "{}",
     "x|a|  x|x  |x|ab"},
    {"{{ 'abc'.startswith('ab') }}{{ 'abc'.startswith('b') }}{{ 'abc'.endswith(('x','c')) }}{{ ''.endswith('') }}",
     "{}",
     "TrueFalseTrueTrue"},
    {"{{ 'aaa'.replace('a','b',2) }}|{{ 'x'.replace('', '-') }}|{{ 'ab'.replace('', '-', 2) }}|{{ 'hello world'.title() }}|{{ 'ab'.upper() }}|{{ 'AB'.lower() }}",
     "{}",
     "bba|-x-|-a-b|Hello World|AB|ab"},
    {"{{ d.get('a') }}|{{ d.get('z') }}|{{ d.get('z', 5) }}|{{ d.keys() | list }}|{{ d.values() | list }}|{{ d.items() | list }}",
     "{\"d\": {\"a\": 1, \"b\": 2}}",
     "1|None|5|['a', 'b']|[1, 2]|[('a', 1), ('b', 2)]"},
};

const std::vector<Case> kOperators = {
    {"{{ 1 and 2 }}|{{ 0 and 2 }}|{{ 0 or 'x' }}|{{ [] or none }}|{{ not 0 }}|{{ not true and false }}|{{ not (true and false) }}",
     "{}",
     "2|0|x|None|True|False|True"},
    {"{{ 1 < 2 < 3 }}|{{ 3 > 2 > 2 }}|{{ 1 == 1.0 }}|{{ true == 1 }}|{{ 'a' < 'b' }}|{{ [1,2] < [1,3] }}|{{ 2 >= 2.0 }}|{{ none == none }}|{{ x == y }}|{{ [1,2] == [1,2] }}|{{ (1,2) == [1,2] }}|{{ {'a':1} == {'a':1.0} }}",
     "{}",
     "True|False|True|True|True|True|True|True|True|True|False|True"},
    {"{{ 'a' in 'abc' }}{{ 'd' not in 'abc' }}{{ 1 in [1,2] }}{{ 'k' in d }}{{ 'z' in d }}{{ 'x' in undefined_thing }}",
     "{\"d\": {\"k\": 1}}",
     "TrueTrueTrueTrueFalseFalse"},
    {"{{ 7 / 2 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ -7 % 3 }}|{{ 7 % -3 }}|{{ 2 ** 10 }}|{{ 2 ** -1 }}|{{ 1.5 + 1 }}|{{ 0.1 + 0.2 }}|{{ 3 - 5 }}|{{ 7.5 // 2 }}|{{ -7.5 % 2 }}",
     "{}",
     "3.5|3|-4|2|-2|1024|0.5|2.5|0.30000000000000004|-2|3.0|0.5"},
    {"{{ -2 ** 2 }}|{{ 2 ** 3 ** 2 }}|{{ 10 - 2 - 3 }}|{{ 2 * 3 + 4 }}|{{ 'a' ~ 2 * 3 }}|{{ ('a' ~ 1) * 2 }}|{{ -1 | abs }}|{{ messages | length - 1 }}",
     "{}",
     "4|64|5|10|a6|a1a1|1|-1"},
    {"{{ 'a' ~ 1 ~ none ~ true ~ undefined_thing }}|{{ 'ab' + 'cd' }}|{{ [1] + [2] }}|{{ 'x' * 3 }}|{{ 2 * 'y' }}|{{ [0] * 2 }}|{{ 'a' * -1 }}",
     "{}",
     "a1NoneTrue|abcd|[1, 2]|xxx|yy|[0, 0]|"},
    {"{{ 'a' if x else 'b' }}|{{ 'a' if y }}|{{ 'a' if y else 'b' if x else 'c' }}",
     "{\"x\": 1, \"y\": 0}",
     "a||b"},
    {"{{ 1e16 }}|{{ 1e-5 }}|{{ 123456789.0 }}|{{ 1.0 }}|{{ -0.0 }}|{{ 2.5e-10 }}|{{ 1e22 }}|{{ 0.0001 }}|{{ 1e15 }}|{{ x }}",
     "{\"x\": 1e+300}",
     "1e+16|1e-05|123456789.0|1.0|-0.0|2.5e-10|1e+22|0.0001|1000000000000000.0|1e+300"},
    {"{{ 'abc' 'def' }}|{{ \"q'q\" }}|{{ '\\u00e9\\x41\\n\\t\\\\' }}|{{ 'a\\qb' }}|{{ '\\101' }}|{{ 1_000 }}",
     "{}",
     "abcdef|q'q|éA\n\t\\|a\\qb|A|1000"},
    {"{{ (1, 2) }}{{ (1,) }}{{ () }}|{{ range(3) | list }}{{ range(1, 7, 2) | list }}{{ range(5, 0, -2) | list }}|{{ dict(a=1) }}",
     "{}",
     "(1, 2)(1,)()|[0, 1, 2][1, 3, 5][5, 3, 1]|{'a': 1}"},
};

const std::vector<Case> kPrinting = {
    {"{{ true }}{{ none }}{{ True }}{{ None }}{{ false }}{{ 3 }}{{ undefined_thing }}",
     "{}",
     "TrueNoneTrueNoneFalse3"},
    {"{{ [1, 'a', none, true, 1.5, {'k': 'v'}, ('t',)] }}",
     "{}",
     "[1, 'a', None, True, 1.5, {'k': 'v'}, ('t',)]"},
    {"{{ d }}",
     "{\"d\": {\"a\": \"it's\", \"b\": \"q\\\"\", \"c\": \"both'\\\"\", \"d\": \"tab\\t nl\\n é \u200d \u00a0 \xc2""\x85"" \x7f"" 😀 \\\\\"}}",
     "{'a': \"it's\", 'b': 'q\"', 'c': 'both\\'\"', 'd': 'tab\\t nl\\n é \\u200d \\xa0 \\x85 \\x7f 😀 \\\\'}"},
};

const std::vector<Case> kTestsAndUndefined = {
    {"{{ x is defined }}{{ y is defined }}{{ x is none }}{{ y is undefined }}{{ x is string }}{{ d is mapping }}{{ l is iterable }}{{ l is sequence }}{{ 1 is number }}{{ true is true }}{{ 1 is true }}{{ false is false }}{{ 0 is false }}{{ x is not none }}",
     "{\"x\": null, \"d\": {}, \"l\": []}",
     "TrueFalseTrueTrueFalseTrueTrueTrueTrueTrueFalseTrueFalseFalse"},
    {"{{ x is string }}{{ x is number }}{{ x is integer }}{{ x is float }}{{ x is boolean }}{{ x is iterable }}{{ x is sequence }}{{ x is mapping }}",
     "{\"x\": true}",
     "FalseTrueFalseFalseTrueFalseFalseFalse"},
    {"{{ y is iterable }}{{ y is sequence }}{{ y is string }}{{ d is sequence }}{{ 'x' is lower }}{{ 'X' is upper }}{{ y is callable }}{{ raise_exception is callable }}{{ 9 is divisibleby 3 }}{{ 9 is divisibleby(2) }}{{ 3 is odd }}{{ 3 is even }}{{ 2 is in [1, 2] }}",
     "{\"d\": {}}",
     "TrueTrueFalseTrueTrueTrueTrueTrueTrueFalseTrueFalseTrue"},
    {"{{ x.y }}|{{ x['y'] }}|{{ none.x }}|{{ 'abc'.nomethod }}|{{ x.y is defined }}|{{ not undefined_thing }}|{{ undefined_thing == undefined_thing }}|{{ undefined_thing ~ 'u' }}",
     "{\"x\": {}}",
     "||||False|True|True|u"},
    {"{% if messages[0] is defined and messages[0].role == 'system' %}sys{% else %}none{% endif %}",
     "{}",
     "none"},
};

// {% macro %}: parameters with defaults, keywords, recursion, and a scope of its own (the
// template's variables, not the caller's loop variables or sets).
const std::vector<Case> kMacros = {
    {"{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}"
     "{{ greet('a') }} {{ greet('b', '?') }} {{ greet(punct='.', name='c') }}",
     "{}",
     "Hi a! Hi b? Hi c."},
    {"{% macro m(a, b) %}[{{ a }}][{{ b }}][{{ b is defined }}]{% endmacro %}{{ m(1) }}",
     "{}",
     "[1][][False]"},
    {"{% macro count(n) %}{{ n }}{% if n > 0 %}{{ count(n - 1) }}{% endif %}{% endmacro %}{{ count(3) }}",
     "{}",
     "3210"},
    {"{% macro m() %}{{ x }}{{ y is defined }}{{ i is defined }}{% endmacro %}"
     "{% for i in [1] %}{% set y = 2 %}{{ m() }}{% endfor %}",
     "{\"x\": \"X\"}",
     "XFalseFalse"},
    {"{%- macro m(items) -%}\n  {%- for it in items %}<{{ it }}>{% endfor -%}\n{%- endmacro -%}\n{{ m([1, 2]) | upper }}",
     "{}",
     "<1><2>"},
    {"{% macro inner(v) %}({{ v }}){% endmacro %}{% macro outer(v) %}{{ inner(v ~ v) }}{% endmacro %}{{ outer('z') }}",
     "{}",
     "(zz)"},
};

std::string render_case(const Case& c) {
  ChatTemplateInputs inputs;
  inputs.extra = nlohmann::ordered_json::parse(c.variables);
  return ChatTemplate(c.source, "<s>", "</s>").render(inputs);
}

void expect_like_jinja(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    std::string rendered;
    ASSERT_NO_THROW(rendered = render_case(c)) << c.source;
    EXPECT_EQ(rendered, c.expected) << c.source << "\nwith " << c.variables;
  }
}

TEST(JinjaLikePython, WhitespaceControl) { expect_like_jinja(kWhitespaceControl); }
TEST(JinjaLikePython, Loops) { expect_like_jinja(kLoops); }
TEST(JinjaLikePython, Macros) { expect_like_jinja(kMacros); }

TEST(JinjaMacros, BadCallsAndEndlessRecursionAreErrors) {
  const auto fails = [](const std::string& source, const std::string& message) {
    try {
      ChatTemplate(source, "<s>", "</s>").render(ChatTemplateInputs{});
      ADD_FAILURE() << source << ": rendered";
    } catch (const ChatTemplateError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << source << ": " << e.what();
    }
  };
  fails("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", "macro 'm' takes not more than 1 argument(s)");
  fails("{% macro m(a) %}{% endmacro %}{{ m(b=1) }}", "macro 'm' takes no keyword argument 'b'");
  fails("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "macros call each other deeper than the limit of 64");
  fails("{% macro m(a b) %}{% endmacro %}", "expected ','");
  fails("{% macro m() %}x", "expected 'endmacro'");
}
TEST(JinjaLikePython, Namespace) { expect_like_jinja(kNamespace); }
TEST(JinjaLikePython, SubscriptsAndSlices) { expect_like_jinja(kSubscriptsAndSlices); }
TEST(JinjaLikePython, Filters) { expect_like_jinja(kFilters); }
TEST(JinjaLikePython, ToJson) { expect_like_jinja(kToJson); }
TEST(JinjaLikePython, StringMethods) { expect_like_jinja(kStringMethods); }
TEST(JinjaLikePython, Operators) { expect_like_jinja(kOperators); }
TEST(JinjaLikePython, Printing) { expect_like_jinja(kPrinting); }
TEST(JinjaLikePython, TestsAndUndefined) { expect_like_jinja(kTestsAndUndefined); }

}  // namespace
}  // namespace nanoserve::templates
