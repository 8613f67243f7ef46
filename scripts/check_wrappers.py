#!/usr/bin/env python3
"""Wrapper bodies are code, not macros (CONTRIBUTING.md, "Adding a wrapper"):
in wrappers/, a macro that holds a statement may only emit a definition whose
body is one forwarding call, `{ return f(...); }`, for the large typed
families (NetCDF forms x types); a macro never hides a `return` among other
statements, nor a block of statements.

Prints each offending macro and exits 1; exit 0 when the rule holds.
Usage: check_wrappers.py [source root]"""
import pathlib
import re
import sys

DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)((?:[^\n\\]|\\.|\\\n)*)", re.M)
# One statement: `return name(...)`, the name possibly pasted (`pnc_##f##_bl`).
ONE_CALL = re.compile(r"return\s+[A-Za-z_][\w#]*\s*\([^;{}]*\)\s*;", re.S)


def blocks(body):
    """The top-level `{...}` blocks of a macro body, and the text outside them."""
    inside, outside, depth, cur = [], [], 0, []
    for ch in body:
        if ch == "{":
            depth += 1
            if depth == 1:
                cur = []
                continue
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                inside.append("".join(cur))
                continue
        (cur if depth else outside).append(ch)
    return inside, "".join(outside)


def forwards_only(body):
    inside, outside = blocks(body)
    return bool(inside) and "return" not in outside and all(
        ONE_CALL.fullmatch(b.strip()) for b in inside)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def violations(root):
    root = pathlib.Path(root)
    for src in sorted((root / "wrappers").glob("*.[ch]")):
        text = strip_comments(src.read_text(errors="replace"))
        for m in DEFINE.finditer(text):
            body = m.group(2).replace("\\\n", " ")
            brace = body.find("{")
            if brace < 0 and "return" not in body:
                continue  # an expression, a name list or a declaration
            if brace >= 0 and forwards_only(body):
                continue
            line = text.count("\n", 0, m.start()) + 1
            yield f"{src.relative_to(root)}:{line}: macro {m.group(1)} holds statements"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent
    bad = list(violations(root))
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
