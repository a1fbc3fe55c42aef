#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/check_doc_links.py [--root DIR] [--self-test] — every relative Markdown link in the
repository's tracked .md files names a file or folder that exists, and every #fragment a
heading of the target (GitHub's anchors). README and docs/ point users at each other: a page
moved or a heading renamed must not leave a dead link. Links inside code (fenced blocks,
`inline`) are not links. Run by tools/lint.sh."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[|\]\([^)]*\)", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    out, fenced = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced and (m := HEADING.match(line)):
                out.add(anchor(m.group(1)))
    return out


def prose(text):
    """The text with fenced blocks and inline code removed."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def check(root, files):
    bad = []
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = prose(f.read())
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check
                continue
            path, _, frag = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(rel), path)) if path else rel
            full = os.path.join(root, resolved)
            if not os.path.exists(full):
                bad.append(f"{rel}: {target}: no such file")
            elif frag and full.endswith(".md") and frag not in anchors(full):
                bad.append(f"{rel}: {target}: no heading #{frag} in {resolved}")
    return bad


def tracked_md(root):
    out = subprocess.check_output(["git", "-C", root, "ls-files", "-z", "*.md"]).decode()
    return [f for f in out.split("\0") if f and os.path.exists(os.path.join(root, f))]


def self_test():
    """A tree with one good link, one to a missing file and one to a missing heading: the
    checker must name exactly the two bad ones."""
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "docs"))
        with open(os.path.join(d, "docs", "a.md"), "w", encoding="utf-8") as f:
            f.write("# A page\n\n## Latest results — `x`\n\n```\n[not](a link)\n```\n")
        with open(os.path.join(d, "README.md"), "w", encoding="utf-8") as f:
            f.write("[ok](docs/a.md#latest-results--x) [gone](docs/b.md) [no](docs/a.md#nope) "
                    "`[code](c.md)` [web](https://example.invalid/x)\n")
        bad = check(d, ["README.md", "docs/a.md"])
    want = ["README.md: docs/b.md: no such file", "README.md: docs/a.md#nope: no heading #nope in docs/a.md"]
    if bad != want:
        print("check_doc_links --self-test: got", bad, "want", want)
        return 1
    print("check_doc_links --self-test: names the missing file and the missing heading, nothing else")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    files = tracked_md(a.root)
    bad = check(a.root, files)
    for b in bad:
        print(b)
    print(f"check_doc_links: {len(files)} Markdown files, {len(bad)} dead links")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
