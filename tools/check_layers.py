#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_layers.py [--root DIR] — every csrc/ component depends only on levels below its own.

The order is tools/layers.txt's (bottom first; run through tools/check_layers.sh). A component
is a folder under csrc/ (with every Bazel package inside it). Two kinds of dependency count:

- in csrc/**/*.{h,cc,cu,cuh}: `#include "csrc/<component>/..."`, and `#include "slimcuda/<h>"`
  (or <slimcuda/<h>>), a public header, mapped to the component whose BUILD file exports it
  under the slimcuda/ prefix (a slimcuda_headers target, or any target with
  include_prefix = "slimcuda");
- in csrc/**/BUILD.bazel: every "//csrc/<component>..." label a target names, except in its
  visibility (who may see a target is not what it needs). Labels of //csrc itself (the
  assembled library) are left out: a component depending on it would be a cycle Bazel rejects.

A dependency on the component's own level or above fails, named by file and line; so does an
include of no known component, a csrc/ folder missing from layers.txt, a listed component with
no folder, and an exception that no longer matches anything (delete it).

One exemption, and only where it must be: test code may depend on `testing` (csrc/testing/,
the fixture reader and test streams every level's suites use, which sits at the top). Test
code is a *_test.cc or *_fuzzer.cc file, a file that only test or testonly targets list, and,
in BUILD files, the deps of those targets. Everything else in a test is checked like library
code. Any other upward dependency must be an `allow` line in layers.txt.
"""
import argparse
import fnmatch
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCE_EXTS = (".h", ".cc", ".cu", ".cuh")
TEST_SUPPORT = "testing"


class Layers:
    """tools/layers.txt: levels (bottom first) and `allow FROM -> TO in GLOB...` exceptions."""

    def __init__(self, path):
        self.path = path
        self.level = {}  # component -> level index
        self.allows = []  # [from, to, [globs], line, used]
        self.errors = []
        for n, raw in enumerate(open(path, encoding="utf-8"), 1):
            line = raw.split("#", 1)[0].split()
            if not line:
                continue
            if line[0] == "allow":
                m = re.fullmatch(r"allow (\S+) -> (\S+) in (.+)", " ".join(line))
                if not m:
                    self.errors.append(f"{path}:{n}: expected `allow FROM -> TO in GLOB...`")
                    continue
                self.allows.append([m.group(1), m.group(2), m.group(3).split(), n, False])
                continue
            depth = len(set(self.level.values()))
            for comp in line:
                if comp in self.level:
                    self.errors.append(f"{path}:{n}: {comp} is listed twice")
                self.level[comp] = depth

    def allowed(self, path, src, dst):
        for a in self.allows:
            if a[0] == src and a[1] == dst and any(fnmatch.fnmatch(path, g) for g in a[2]):
                a[4] = True
                return True
        return False


# Starlark tokens, as far as this check needs: comments, strings (escapes included), words,
# and single characters.
TOKEN = re.compile(
    r"#[^\n]*"
    r'|"""(?:\\.|[^\\])*?"""'
    r"|'''(?:\\.|[^\\])*?'''"
    r'|"(?:\\.|[^"\\\n])*"'
    r"|'(?:\\.|[^'\\\n])*'"
    r"|==|\w+|\S",
    re.S,
)
OPEN, CLOSE = set("([{"), set(")]}")


def tokens(text):
    """(token, offset) pairs, comments dropped."""
    return [(m.group(0), m.start()) for m in TOKEN.finditer(text) if not m.group(0).startswith("#")]


def statements(toks):
    """Top-level statements as (kind, tokens): a call `kind(...)`, or a `[kind(...) for ...]`
    list; kind is the called name."""
    out, depth, start = [], 0, 0
    for i, (t, _) in enumerate(toks):
        if t in OPEN:
            if depth == 0:
                start = i
            depth += 1
        elif t in CLOSE:
            depth -= 1
            if depth == 0:
                stmt = toks[start : i + 1]
                kind = toks[start - 1][0] if start > 0 else ""
                if stmt[0][0] == "[" and len(stmt) > 2 and stmt[2][0] == "(":
                    kind = stmt[1][0]
                out.append((kind, stmt))
    return out


def strings_with_attr(stmt):
    """(attribute, string value, offset) for every plain string literal among a statement's
    arguments, with the innermost `attribute =` it stands under."""
    out, attrs, depth = [], {}, 0
    for i, (t, off) in enumerate(stmt):
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            attrs.pop(depth, None)
            depth -= 1
        elif t == "=" and i > 0 and re.fullmatch(r"\w+", stmt[i - 1][0]):
            attrs[depth] = stmt[i - 1][0]
        elif t == ",":
            attrs.pop(depth, None)
        elif t[0] in "\"'" and not t.startswith(('"""', "'''")):  # a genrule's cmd names no label
            attr = attrs[max(attrs)] if attrs else None
            out.append((attr, t[1:-1], off))
    return out


class BuildFile:
    """One BUILD.bazel: its targets' labels (with lines), test-ness, and the public headers
    it exports under slimcuda/."""

    def __init__(self, path, package):
        self.path, self.package = path, package
        text = open(path, encoding="utf-8").read()
        self.labels = []  # (line, label, is_test)
        self.test_files, self.library_files = set(), set()
        self.public = {}  # "slimcuda/x.h" -> package
        toks = tokens(text)
        for kind, stmt in statements(toks):
            words = [t for t, _ in stmt]
            keyword = lambda k, v: any(words[i : i + 3] == [k, "=", v] for i in range(len(words)))
            is_test = kind.endswith("_test") or keyword("testonly", "True")
            public = kind == "slimcuda_headers" or keyword("include_prefix", '"slimcuda"')
            for attr, value, off in strings_with_attr(stmt):
                if attr in ("visibility", "default_visibility"):
                    continue
                if value.startswith("//csrc/"):
                    self.labels.append((text.count("\n", 0, off) + 1, value, is_test))
                elif attr in ("srcs", "hdrs") and value and not value.startswith((":", "/", "@")):
                    (self.test_files if is_test else self.library_files).add(f"{package}/{value}")
                    if public and attr == "hdrs":
                        self.public[f"slimcuda/{value}"] = package


def component_of(path):
    """csrc/<component>/... -> component (None outside a component)."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "csrc" else None


def scan(root):
    """csrc/'s BUILD files (not csrc/BUILD.bazel: the assembled library, above every
    component) and its C, C++ and CUDA sources, as paths relative to root."""
    builds, sources = [], []
    for dirpath, dirs, files in os.walk(os.path.join(root, "csrc")):
        dirs.sort()
        rel = os.path.relpath(dirpath, root)
        for f in sorted(files):
            if f == "BUILD.bazel" and rel != "csrc":
                builds.append(BuildFile(os.path.join(dirpath, f), rel))
            elif f.endswith(SOURCE_EXTS):
                sources.append(f"{rel}/{f}")
    return builds, sources


def dependencies(root, builds, sources, errors):
    """(where, path, from, to, what, is test code) for every dependency on a component."""
    public = {h: component_of(pkg + "/") for b in builds for h, pkg in b.public.items()}
    test_only = set().union(*(b.test_files for b in builds))
    test_only -= set().union(*(b.library_files for b in builds))
    for path in sources:
        is_test = path.endswith(("_test.cc", "_fuzzer.cc")) or path in test_only
        src = component_of(path)
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                inc = m.group(2) if m else ""
                if inc.startswith("csrc/"):
                    yield f"{path}:{n}", path, src, component_of(inc) or inc, inc, is_test
                elif inc.startswith("slimcuda/") and inc not in public:
                    errors.append(f"{path}:{n}: {inc}: no component exports it (slimcuda_headers)")
                elif inc.startswith("slimcuda/"):
                    dst = public[inc]
                    yield f"{path}:{n}", path, src, dst, f"{inc} (csrc/{dst}/)", is_test
    for b in builds:
        path = os.path.relpath(b.path, root)
        for n, label, is_test in b.labels:
            dst = re.match(r"//csrc/([^/:]+)", label).group(1)
            yield f"{path}:{n}", path, component_of(b.package + "/"), dst, label, is_test


def check(root, layers_path):
    """Every finding, as `file:line: what` lines."""
    layers = Layers(layers_path)
    errors = list(layers.errors)
    builds, sources = scan(root)
    csrc = os.path.join(root, "csrc")
    folders = {d for d in os.listdir(csrc) if os.path.isdir(os.path.join(csrc, d))}
    for comp in sorted(folders - layers.level.keys()):
        errors.append(f"csrc/{comp}/: component not listed in {layers.path}")
    for comp in sorted(layers.level.keys() - folders):
        errors.append(f"{layers.path}: {comp} is listed but csrc/{comp}/ does not exist")
    for where, path, src, dst, what, is_test in dependencies(root, builds, sources, errors):
        if dst == src or src not in layers.level:
            continue
        if dst not in layers.level:
            if dst not in folders:  # an unlisted folder is reported once, above
                errors.append(f"{where}: {what}: there is no component csrc/{dst}/")
            continue
        if layers.level[dst] < layers.level[src] or (is_test and dst == TEST_SUPPORT):
            continue
        if layers.allowed(path, src, dst):
            continue
        rel = "the same level as" if layers.level[dst] == layers.level[src] else "above"
        errors.append(f"{where}: {src} depends on {what}, and {dst} is {rel} {src}"
                      f" in {layers.path}")
    for a in layers.allows:
        if not a[4]:
            errors.append(f"{layers.path}:{a[3]}: `allow {a[0]} -> {a[1]}` matches nothing:"
                          " delete it")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.join(here, ".."), help="default: this checkout")
    ap.add_argument("--layers", default=None, help="default: ROOT/tools/layers.txt")
    args = ap.parse_args()
    layers = os.path.abspath(args.layers) if args.layers else "tools/layers.txt"
    os.chdir(args.root)  # paths in findings are relative to the root
    errors = check(".", layers)
    for e in errors:
        print(e)
    if errors:
        print(f"check_layers: {len(errors)} finding(s)")
        return 1
    print(f"check_layers: every csrc/ dependency goes down the levels of {layers}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
