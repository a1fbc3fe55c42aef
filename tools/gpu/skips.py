#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""skips.py LOGS — the skipped tests of a GPU run (tools/gpu/run.sh's logs: googletest XML
files and Go `-test.v` logs), counted by reason, and whether every reason is allowed there.

On the GPU machine a skip may only mean what cannot be helped on one GPU: a test of the
no-GPU behaviour ("for machines without a GPU") or one that needs a second GPU ("needs two
GPUs"). Those texts are the suites' own (csrc/testing/fixtures.h, go/internal/fixture). Any
other reason — a missing export, a file that was not found, an unknown one — fails the run,
since a test that skipped there checked nothing. Prints one line per reason, the tests under
it, and exits 1 when a reason is not allowed.
"""
import collections
import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

ALLOWED = ("for machines without a GPU", "needs two GPUs")


def reasons_of(text):
    """One skip message may hold several reasons ("needs two GPUs: 3 cases; ...")."""
    return [r.strip() for r in text.split(";") if r.strip()] or ["(no reason given)"]


def gtest_skips(path):
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        skipped = case.find("skipped")
        if case.get("result") != "skipped" and skipped is None:
            continue
        message = skipped.get("message", "") if skipped is not None else ""
        # googletest writes "file:line\nreason" (some versions "file:line\nSkipped\nreason").
        lines = [l for l in message.split("\n") if l.strip()]
        if lines and re.match(r"^\S+:\d+$", lines[0].strip()):
            lines = lines[1:]
        if lines and lines[0].strip() == "Skipped":
            lines = lines[1:]
        text = " ".join(l.strip() for l in lines)
        out.append((f"{case.get('classname')}.{case.get('name')}", text))
    return out


LOG_LINE = re.compile(r"^\s+\S+\.go:\d+: (.*)$")
SKIP_LINE = re.compile(r"^\s*--- SKIP: (\S+)")
RUN_LINE = re.compile(r"^=== (RUN|CONT|NAME|PAUSE)\s+(\S+)")


def go_skips(path):
    """The message logged last by the test before its "--- SKIP" line (t.Skip's own)."""
    out, last = [], {}
    current = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = RUN_LINE.match(line)
            if m:
                current = m.group(2)
                continue
            m = LOG_LINE.match(line)
            if m and current is not None:
                last[current] = m.group(1)
                continue
            m = SKIP_LINE.match(line)
            if m:
                out.append((m.group(1), last.get(m.group(1), "")))
    return out


def main():
    logs = sys.argv[1]
    skips = []
    for path in sorted(glob.glob(os.path.join(logs, "*.xml"))):
        skips += [(os.path.basename(path)[:-4], t, r) for t, r in gtest_skips(path)]
    for path in sorted(glob.glob(os.path.join(logs, "go_*.log"))):
        skips += [(os.path.basename(path)[:-4], t, r) for t, r in go_skips(path)]
    by_reason = collections.defaultdict(list)
    for binary, test, text in skips:
        for reason in reasons_of(text):
            key = next((a for a in ALLOWED if reason.startswith(a)), reason)
            by_reason[key].append(f"{binary}: {test}")
    bad = 0
    for reason, tests in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        allowed = reason in ALLOWED
        bad += 0 if allowed else len(tests)
        print(f"skipped {len(tests):4d} x {'(allowed) ' if allowed else 'NOT ALLOWED: '}{reason}")
        for t in tests[: None if not allowed else 3]:
            print(f"         {t}")
        if allowed and len(tests) > 3:
            print(f"         ... and {len(tests) - 3} more")
    print(f"skips: {len(skips)} tests, {bad} with a reason not allowed on the GPU machine")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
