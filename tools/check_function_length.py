#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_function_length.py [--max N] [--all] [PATH...] — library functions stay short.

Lists every function of the library longer than N lines (default 80; from its signature's
first line to its closing brace) in the C, C++ and CUDA sources under csrc/ and the Go sources
under go/ (or under the PATHs given), and fails unless each one is marked: a comment
`// long: <reason>` in the comment block right above its signature (the line before the
signature, or before or within its doc comment). --all lists marked ones too.

Not library code, so not checked: tests (*_test.cc, *_test.go), fuzz targets (*_fuzzer.cc)
and test support (any testing/ folder; go/internal/fixture and helpertest).

A heuristic, not a parser: comments, strings and preprocessor lines are blanked, then each
`{` outside a function whose preceding text reads like a signature (a parameter list, then
only qualifiers such as const, noexcept, override or a trailing return type, or a
constructor's initializer list) opens a function, closed by its matching `}`. Lambdas and
local classes count as part of the function around them; class, struct and namespace bodies
are searched for functions. In Go, a function is a `func` declaration at the top level.
"""
import argparse
import os
import re
import sys

C_EXTS = (".h", ".hpp", ".cc", ".cu", ".cuh")
SKIP_FILES = re.compile(r"(_test\.(cc|go)|_fuzzer\.cc)$")
SKIP_DIRS = ("testing", "go/internal/fixture", "go/internal/helpertest")
MARKER = re.compile(r"//\s*long:\s*\S")
CONTROL = {"if", "for", "while", "switch", "catch", "do", "else", "try", "return", "sizeof", "decltype"}
CONTAINER = re.compile(r"\b(namespace|class|struct|union|enum)\b|\bextern\s*$")
QUALIFIERS = re.compile(
    r"^\s*((const|volatile|noexcept|override|final|mutable|&&?|throw\s*\(\s*\))\s*|noexcept\s*\(.*\)\s*|->.*)*$", re.S
)


def blank(text, go):
    """text with comments, string and character literals (and in C, preprocessor lines)
    replaced by spaces; newlines kept, so offsets and line numbers stay."""
    out, i, n = list(text), 0, len(text)

    def clear(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    at_line_start = True
    while i < n:
        c = text[i]
        if not go and at_line_start and c == "#":
            j = i
            while True:  # a directive runs on over backslash-newlines
                e = text.find("\n", j)
                e = n if e < 0 else e
                if e > 0 and text[e - 1] == "\\" and e < n:
                    j = e + 1
                    continue
                break
            clear(i, e)
            i = e
            continue
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            e = text.find("\n", i)
            e = n if e < 0 else e
            clear(i, e)
            i = e
        elif text.startswith("/*", i):
            e = text.find("*/", i + 2)
            e = n if e < 0 else e + 2
            clear(i, e)
            i = e
        elif not go and c == "R" and text.startswith('"', i + 1) and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            e = text.find(")" + m.group(1) + '"', i) if m else -1
            e = n if e < 0 else e + len(m.group(1)) + 2
            clear(i, e)
            i = e
        elif go and c == "`":
            e = text.find("`", i + 1)
            e = n if e < 0 else e + 1
            clear(i, e)
            i = e
        elif c in "\"'":
            if c == "'" and not go and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            clear(i, min(j + 1, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def matching(text, i):
    """The offset of the brace that closes the one at i (len(text) if none)."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text)


def header_is_function(head):
    """Whether the text between the previous ; { } and a { reads like a function signature."""
    h = head.strip()
    if not h or "(" not in h or CONTAINER.search(h.split("(", 1)[0]):
        return False
    if re.search(r"(^|[^=!<>])=([^=]|$)", h.split("(", 1)[0]):  # an initializer, not a signature
        return False
    first = re.match(r"[A-Za-z_]\w*", h)
    if first and first.group(0) in CONTROL:
        return False
    # The parameter list: the first parenthesised group after the name, at top level.
    depth, close = 0, -1
    for k, ch in enumerate(h):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                close = k
                break
    if close < 0:
        return False
    before, after = h[: h.index("(")], h[close + 1 :]
    if not re.search(r"[\w>~\]]\s*$", before) or re.search(r"\]\s*$", before):  # ](: a lambda
        return False
    if re.search(r"\b(if|for|while|switch|catch)\s*$", before):
        return False
    return bool(QUALIFIERS.match(after)) or bool(re.match(r"^\s*(noexcept\s*)?:[^:]", after))


def name_of(head):
    before = head.strip().split("(", 1)[0]
    m = re.search(r"([~\w:]+|operator\s*\S+)\s*$", before)
    return m.group(1) if m else before.strip()


def c_functions(text):
    """(start offset, end offset, name) of every function in blanked C/C++ text."""
    out, i, last = [], 0, 0  # last: just after the previous ; { or } outside a function
    while i < len(text):
        c = text[i]
        if c in ";}":
            last = i + 1
        elif c == "{":
            head = re.sub(r"^\s*(public|private|protected)\s*:(?!:)", lambda m: " " * len(m.group(0)), text[last:i])
            if header_is_function(head):
                end = matching(text, i)
                start = last + len(head) - len(head.lstrip())
                out.append((start, end, name_of(head)))
                i = last = end + 1
                continue
            last = i + 1
        i += 1
    return out


def go_functions(text):
    """(start offset, end offset, name) of every top-level func declaration in blanked Go."""
    out = []
    for m in re.finditer(r"^func\b", text, re.M):
        depth, i = 0, m.end()
        while i < len(text):  # the body's brace: the first { outside the signature's brackets
            c = text[i]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif c == "{" and depth == 0:
                if not re.search(r"\b(struct|interface)\s*$", text[m.start() : i]):
                    break
                i = matching(text, i)  # a struct{} or interface{} result type
            i += 1
        name = re.match(r"func\s*(\([^)]*\)\s*)?(\w+)", text[m.start() : i])
        out.append((m.start(), matching(text, i), name.group(2) if name else "func"))
    return out


def marked(lines, first):
    """Whether the comment block right above line index `first` carries the marker."""
    k = first - 1
    while k >= 0 and lines[k].lstrip().startswith("//"):
        if MARKER.search(lines[k]):
            return True
        k -= 1
    return False


def long_functions(path, limit):
    text = open(path, encoding="utf-8", errors="replace").read()
    go = path.endswith(".go")
    clean = blank(text, go)
    lines = text.split("\n")
    for start, end, name in go_functions(clean) if go else c_functions(clean):
        first, last = text.count("\n", 0, start), text.count("\n", 0, end)
        if last - first + 1 > limit:
            yield first + 1, name, last - first + 1, marked(lines, first)


def sources(roots):
    for root in roots:
        for dirpath, dirs, files in os.walk(root):
            dirs.sort()
            rel = os.path.relpath(dirpath).replace(os.sep, "/")
            if any(rel == d or rel.endswith("/" + d) or rel.startswith(d + "/") or f"/{d}/" in rel for d in SKIP_DIRS):
                continue
            for f in sorted(files):
                if f.endswith(C_EXTS + (".go",)) and not SKIP_FILES.search(f):
                    yield f"{rel}/{f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--max", type=int, default=80, help="longest allowed unmarked function (lines)")
    ap.add_argument("--all", action="store_true", help="list marked long functions too")
    ap.add_argument("paths", nargs="*", help="default: csrc go (from the repository root)")
    args = ap.parse_args()
    if not args.paths:
        os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    unmarked = marked_count = 0
    for path in sources(args.paths or ["csrc", "go"]):
        for line, name, n, ok in long_functions(path, args.max):
            marked_count += ok
            unmarked += not ok
            if args.all or not ok:
                print(f"{path}:{line}: {name}: {n} lines{' (marked long)' if ok else ''}")
    if unmarked:
        print(f"check_function_length: {unmarked} function(s) over {args.max} lines without a `// long: <reason>`"
              f" comment above them ({marked_count} marked)")
        return 1
    print(f"check_function_length: no unmarked function over {args.max} lines ({marked_count} marked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
