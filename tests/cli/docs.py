#!/usr/bin/env python3
"""Runs the commands of the manual's ```console blocks and compares their output.

Usage: docs.py WITNESS SOURCE_DIR [PAGE.md ...]   (default: every docs/*.md and README.md)

In a ```console block, a line `$ NAME=value` sets a variable for the page's later commands; a
line `$ build/witness ARGS...` runs witness (the given WITNESS binary) from the source tree with
the variables expanded, and the lines up to the next `$ ` line are its expected output (stdout and
stderr together, as a terminal shows them). A line `...` stands for any number of lines. Numbers
of seconds (`0.01 s`) and dates are not compared. Prints one line per failure; exits 1 on any.
"""
import os
import re
import shlex
import subprocess
import sys

WITNESS, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
PAGES = sys.argv[3:] or sorted(
    [os.path.join(SRC, "docs", p) for p in os.listdir(os.path.join(SRC, "docs")) if p.endswith(".md")] +
    [os.path.join(SRC, "README.md")])

SECONDS = re.compile(r"\b\d+(\.\d+)? s\b")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")


def normal(line):
    return DATE.sub("<date>", SECONDS.sub("<t> s", line.rstrip()))


def matches(got, want):
    """`want` lines against `got`, where a `...` line in want matches any run of lines."""
    if not want:
        return not got
    if want[0] == "...":
        return any(matches(got[k:], want[1:]) for k in range(len(got) + 1))
    return bool(got) and normal(got[0]) == normal(want[0]) and matches(got[1:], want[1:])


def blocks(text):
    inside = False
    for line in text.splitlines():
        if line.startswith("```console"):
            inside, block = True, []
        elif inside and line.startswith("```"):
            inside = False
            yield block
        elif inside:
            block.append(line)


def main():
    failures = ran = 0
    for page in PAGES:
        env = {}  # variables set on the page hold for its later blocks
        for block in blocks(open(page, encoding="utf-8").read()):
            k = 0
            while k < len(block):
                line = block[k]
                k += 1
                if not line.startswith("$ "):
                    continue
                command = line[2:]
                expected = []
                while k < len(block) and not block[k].startswith("$ "):
                    expected.append(block[k])
                    k += 1
                assignment = re.fullmatch(r"(\w+)=(\S+)", command)
                if assignment:
                    env[assignment.group(1)] = assignment.group(2)
                    continue
                words = shlex.split(command)
                words = [re.sub(r"\$(\w+)", lambda m: env.get(m.group(1), m.group(0)), w) for w in words]
                if words[0] != "build/witness":
                    print(f"FAIL {os.path.relpath(page, SRC)}: not a witness command: {command}")
                    failures += 1
                    continue
                p = subprocess.run([WITNESS] + words[1:], cwd=SRC, capture_output=True, text=True, timeout=300)
                got = (p.stdout + p.stderr).splitlines()
                ran += 1
                if not matches(got, expected):
                    failures += 1
                    print(f"FAIL {os.path.relpath(page, SRC)}: {command}")
                    for a, b in zip(got + [""] * len(expected), expected + [""] * len(got)):
                        if normal(a) != normal(b) and b != "...":
                            print(f"  got:  {a}\n  want: {b}")
                            break
    print(f"docs: {ran} commands run, {failures} failed")
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
