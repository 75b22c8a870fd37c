#!/usr/bin/env python3
"""Renders a chat template with jinja2 as transformers' apply_chat_template does: the oracle
that `difftx template` is compared with (tests/scripts/chat_templates.sh).

  chat_template_oracle.py (--model DIR | --chat-template FILE) --messages FILE.json
                          [--no-generation-prompt] [--date YYYY-MM-DD]
  chat_template_oracle.py ... --messages A.json B.json ... --out-dir DIR
      renders each file with and without the generation prompt into DIR/A.gen.out and
      DIR/A.nogen.out, with .err and .rc (the exit status) beside them: one process for many

transformers' settings: ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
extensions=[loopcontrols]), a tojson filter that is json.dumps(ensure_ascii=False), the globals
raise_exception(msg) and strftime_now(fmt), the {% generation %} block, the special tokens of
tokenizer_config.json and tools=None, documents=None unless the messages file gives them. The prompt goes to stdout byte
for byte; raise_exception exits 3 with "TemplateError: <message>" on stderr, other render errors
exit 4. Needs only Debian's python3-jinja2 (not transformers itself).
"""
import argparse
import datetime
import json
import os
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

SPECIAL_TOKENS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]


class RaisedError(Exception):
    pass


class Generation(jinja2.ext.Extension):
    """transformers' {% generation %} block: its body rendered as a call block."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def load_template(args):
    config = {}
    if args.model:
        path = os.path.join(args.model, "tokenizer_config.json")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                config = json.load(f)
    if args.chat_template:
        with open(args.chat_template, encoding="utf-8") as f:
            return f.read(), config
    jinja_path = os.path.join(args.model, "chat_template.jinja")
    if os.path.exists(jinja_path):
        with open(jinja_path, encoding="utf-8") as f:
            return f.read(), config
    template = config.get("chat_template")
    if isinstance(template, list):  # named templates: transformers takes tool_use for a call with tools
        named = {t["name"]: t["template"] for t in template}
        if "default" not in named:
            sys.exit(f"oracle: {args.model}'s chat_template list has no default")
        return named, config
    if template is None:
        sys.exit(f"oracle: {args.model} has no chat template")
    return template, config


def special_tokens(config):
    def text(tok):
        if isinstance(tok, str):
            return tok
        if isinstance(tok, dict) and isinstance(tok.get("content"), str):
            return tok["content"]
        return None

    out = {}
    for name in SPECIAL_TOKENS:
        t = text(config.get(name))
        if t:
            out[name] = t
    if isinstance(config.get("additional_special_tokens"), list):
        out["additional_special_tokens"] = [t for t in map(text, config["additional_special_tokens"]) if t is not None]
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model")
    parser.add_argument("--chat-template")
    parser.add_argument("--messages", required=True, nargs="+")
    parser.add_argument("--out-dir")
    parser.add_argument("--no-generation-prompt", action="store_true")
    parser.add_argument("--date", default=os.environ.get("DIFFTX_TEMPLATE_DATE", ""))
    args = parser.parse_args()
    source, config = load_template(args)

    def raise_exception(message):
        raise RaisedError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        now = datetime.datetime.strptime(args.date, "%Y-%m-%d") if args.date else datetime.datetime.now()
        return now.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    named = source if isinstance(source, dict) else {"default": source}
    try:
        template = {name: env.from_string(text) for name, text in named.items() if name in ("default", "tool_use")}
    except jinja2.TemplateSyntaxError as e:
        print(f"TemplateSyntaxError: line {e.lineno}: {e.message}", file=sys.stderr)
        sys.exit(2)

    if not args.out_dir:
        if len(args.messages) != 1:
            sys.exit("oracle: several --messages files need --out-dir")
        status, prompt, error = render(template, config, args.messages[0], not args.no_generation_prompt)
        sys.stdout.buffer.write(prompt.encode("utf-8"))
        if error:
            print(error, file=sys.stderr)
        sys.exit(status)
    os.makedirs(args.out_dir, exist_ok=True)
    for path in args.messages:
        stem = os.path.join(args.out_dir, os.path.splitext(os.path.basename(path))[0])
        for generation in (True, False):
            status, prompt, error = render(template, config, path, generation)
            base = stem + (".gen" if generation else ".nogen")
            with open(base + ".out", "wb") as f:
                f.write(prompt.encode("utf-8"))
            with open(base + ".err", "w", encoding="utf-8") as f:
                f.write(error + "\n" if error else "")
            with open(base + ".rc", "w", encoding="utf-8") as f:
                f.write(f"{status}\n")


def render(templates, config, messages_path, add_generation_prompt):
    """(exit status, prompt, error line): 0 rendered, 3 raise_exception, 4 another failure.
    templates: by name; tool_use where the call has tools, as transformers chooses."""
    with open(messages_path, encoding="utf-8") as f:
        data = json.load(f)
    extra = {}
    if isinstance(data, dict):
        extra = {k: v for k, v in data.items() if k != "messages"}
        data = data["messages"]
    variables = {**special_tokens(config), "messages": data, "tools": None, "documents": None,
                 "add_generation_prompt": add_generation_prompt, **extra}
    template = templates["tool_use"] if variables["tools"] is not None and "tool_use" in templates else templates["default"]
    try:
        return 0, template.render(**variables), ""
    except RaisedError as e:
        return 3, "", f"TemplateError: {e}"
    except Exception as e:  # noqa: BLE001 - any render failure is reported, not raised
        return 4, "", f"{type(e).__name__}: {e}"


if __name__ == "__main__":
    main()
