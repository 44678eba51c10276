#!/usr/bin/env python3
"""Runs the commands of the manual's ```console blocks and compares their output.

Usage: docs.py [--update] WITNESS SOURCE_DIR [PAGE.md ...]   (default: every docs/*.md and README.md)

In a ```console block, a line `$ NAME=value` sets a variable for the page's later commands; any
other `$ ` line is a bash command line (pipes, redirections and `; echo $?` as a reader would type
them) whose `build/witness` is the given WITNESS binary; the lines up to the next `$ ` line are its
expected output (stdout and stderr together, as a terminal shows them). A line `...` (indented or
not) stands for any number of lines; a line ending in `...`, for any line that starts with what
precedes it. Numbers of seconds (`0.01 s`) and dates are not compared. Commands run in a scratch
folder that shows the source tree's files (so files a page writes, `g.csv`, stay out of the tree),
one per page. Prints one line per failure; exits 1 on any.
"""
import os
import re
import subprocess
import sys
import tempfile

# --update (first): a writer's aid, not the test: a command's output that differs replaces the page's.
UPDATE = sys.argv[1:2] == ["--update"]
ARGS = sys.argv[2:] if UPDATE else sys.argv[1:]
WITNESS, SRC = ARGS[0], os.path.abspath(ARGS[1])
PAGES = [os.path.abspath(p) for p in ARGS[2:]] or sorted(
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
    if want[0].strip() == "...":
        return any(matches(got[k:], want[1:]) for k in range(len(got) + 1))
    if not got:
        return False
    if want[0].endswith("...") and normal(got[0]).startswith(normal(want[0][:-3])):  # the line cut short
        return matches(got[1:], want[1:])
    return normal(got[0]) == normal(want[0]) and matches(got[1:], want[1:])


def blocks(text):
    """(index of the block's first line in the page, the block's lines) per ```console block."""
    inside = False
    for n, line in enumerate(text.splitlines()):
        if line.startswith("```console"):
            inside, block, first = True, [], n + 1
        elif inside and line.startswith("```"):
            inside = False
            yield first, block
        elif inside:
            block.append(line)


def scratch_folder():
    """A folder whose entries link to the source tree's, with build/witness the binary under test."""
    folder = tempfile.mkdtemp(prefix="witness-docs-")
    for entry in os.listdir(SRC):
        if entry not in ("build", ".git"):
            os.symlink(os.path.join(SRC, entry), os.path.join(folder, entry))
    os.mkdir(os.path.join(folder, "build"))
    os.symlink(os.path.abspath(WITNESS), os.path.join(folder, "build", "witness"))
    return folder


def main():
    failures = ran = 0
    for page in PAGES:
        env = dict(os.environ)  # variables set on the page hold for its later blocks
        env["PATH"] = "/usr/bin:" + env.get("PATH", "")  # Debian's python3 (numpy) for the pages' scripts
        cwd = scratch_folder()
        text = open(page, encoding="utf-8").read()
        updates = []  # (first line, end line, new lines) of outputs to replace
        for first, block in blocks(text):
            k = 0
            while k < len(block):
                line = block[k]
                k += 1
                if not line.startswith("$ "):
                    continue
                command = line[2:]
                while command.endswith("\\") and k < len(block):  # a command continued on the next line
                    command = command[:-1] + block[k].strip()
                    k += 1
                expected = []
                start = k
                while k < len(block) and not block[k].startswith("$ "):
                    expected.append(block[k])
                    k += 1
                assignment = re.fullmatch(r"(\w+)=(\S+)", command)
                if assignment:
                    env[assignment.group(1)] = assignment.group(2)
                    continue
                p = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                                   timeout=300)
                got = (p.stdout + p.stderr).splitlines()
                ran += 1
                if not matches(got, expected):
                    failures += 1
                    updates.append((first + start, first + k, got))
                    print(f"FAIL {os.path.relpath(page, SRC)}: {command}")
                    for a, b in zip(got + [""] * len(expected), expected + [""] * len(got)):
                        if normal(a) != normal(b) and b.strip() != "...":
                            print(f"  got:  {a}\n  want: {b}")
                            break
        subprocess.run(["rm", "-rf", cwd])
        if UPDATE and updates:
            lines = text.split("\n")
            for begin, end, got in reversed(updates):
                want = lines[begin:end]
                if not want:  # a command shown without its output: its first line, then any
                    lines[begin:end] = got[:1] + ["..."] * (len(got) > 1)
                elif all(w.strip() != "..." for w in want):  # an elided output is left for the writer to mend
                    lines[begin:end] = got
            open(page, "w", encoding="utf-8").write("\n".join(lines))
    print(f"docs: {ran} commands run, {failures} failed")
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
