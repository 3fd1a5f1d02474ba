#!/usr/bin/env python3
"""Checks the expected outputs of jinja_semantics_test.cpp against Python Jinja2.

Renders every {source, variables, expected} case of that file with Jinja2 configured as
Hugging Face's apply_chat_template configures it, and reports the cases whose expected
output differs. Run it after adding a case (with expected "" to see what Jinja2 prints):

    python3 tests/template/jinja_reference.py        # needs jinja2 (3.1.6 made the tables)
"""
import json
import pathlib
import re
import sys

from jinja2 import nodes
from jinja2.exceptions import TemplateError
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class Generation(Extension):
    """HF's {% generation %} block; outside assistant-mask tracking it renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        next(parser.stream)
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.Scope(body)


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols, Generation])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


LITERAL = r'"(?:[^"\\]|\\.)*"'
CASE = re.compile(r"\{((?:%s\s*)+),\s*((?:%s\s*)+),\s*((?:%s\s*)+)\}" % (LITERAL, LITERAL, LITERAL))
ESCAPE = re.compile(r'\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)')
SIMPLE = {"n": b"\n", "t": b"\t", "r": b"\r", "\\": b"\\", '"': b'"'}


def cpp_string(text):
    """The text of adjacent C++ string literals, decoding the escapes the test file uses."""
    out = b""
    for literal in re.findall(LITERAL, text):
        body, pos = literal[1:-1], 0
        for m in ESCAPE.finditer(body):
            out += body[pos:m.start()].encode("utf-8")
            e = m.group(1)
            if e[0] == "x":
                out += bytes([int(e[1:], 16)])
            elif e[0] in "uU":
                out += chr(int(e[1:], 16)).encode("utf-8")
            else:
                out += SIMPLE[e]
            pos = m.end()
        out += body[pos:].encode("utf-8")
    return out.decode("utf-8")


def main():
    source = (pathlib.Path(__file__).parent / "jinja_semantics_test.cpp").read_text(encoding="utf-8")
    env = environment()
    cases = CASE.findall(source)
    wrong = 0
    for raw_source, raw_variables, raw_expected in cases:
        template, expected = cpp_string(raw_source), cpp_string(raw_expected)
        variables = json.loads(cpp_string(raw_variables))
        rendered = env.from_string(template).render(
            messages=[], tools=None, add_generation_prompt=True, bos_token="<s>", eos_token="</s>", **variables)
        if rendered != expected:
            wrong += 1
            print(f"{template!r}\n  expected in the test: {expected!r}\n  Jinja2 renders:       {rendered!r}")
    print(f"{len(cases)} cases, {wrong} differ from Jinja2")
    return 1 if wrong or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
