#!/usr/bin/python3
"""Seeds fuzz/corpus/search_state/ (fuzz/fuzz_search_state.cpp) with states of its question.

Runs witness on Fairify's GC1 network (german.toml, protected age, --quantify): a checkpoint
cut short at 0.1 s, a split into 3 parts and their results at 0.05 s each. Each state
becomes a JSON entry (first byte 0), a binary MPI-message entry (first byte 1: the same state in
search_state_bytes.cpp's layout), and the three results one merge entry (first byte 2).

    tools/make_state_corpus.py build/witness fuzz/corpus/search_state
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

MAGIC = b"witness search state bytes 1\n"


def long_double(hex_text):
    """A long double's 16 bytes (x86-64 80-bit extended, padded) from its hex text."""
    return np.longdouble(float.fromhex(hex_text)).tobytes()


def to_bytes(state_text):
    state = json.loads(state_text)
    regions = state["open"]
    state["open"] = []
    rest = json.dumps(state).encode()
    out = MAGIC + struct.pack("<Q", len(rest)) + rest + struct.pack("<Q", len(regions))
    for r in regions:
        out += struct.pack(f"<{len(r['lo'])}d", *r["lo"]) + struct.pack(f"<{len(r['hi'])}d", *r["hi"])
        out += struct.pack("<iidB", r["depth"], r["split"], r["key"], 1 if r["recount"] else 0)
        out += long_double(r["fair"]) + long_double(r["unfair"])
        out += struct.pack("<I", len(r["pairs"])) + struct.pack(f"<{len(r['pairs'])}i", *r["pairs"])
        out += struct.pack("<I", len(r["known"]))
        for k in r["known"]:
            out += struct.pack(f"<{len(k)}d", *k)
    return out


def main():
    witness, out_dir = sys.argv[1], sys.argv[2]
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bench = os.path.join(src, "benchmarks", "fairify")
    question = [os.path.join(bench, "models", "german", "GC1.h5"), "--schema", os.path.join(bench, "german.toml"),
                "--protected", "age", "--quantify", "--threads", "1"]
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        states = {}
        for name, limit in [("checkpoint_0.1s", "0.1")]:
            path = os.path.join(tmp, name + ".json")
            subprocess.run([witness, "fair", *question, "--time-limit", limit, "--checkpoint", path],
                           stdout=subprocess.DEVNULL, check=False)
            states[name] = open(path).read()
        parts = os.path.join(tmp, "parts")
        subprocess.run([witness, "fair", *question, "--split-into", "3", "--out-dir", parts],
                       stdout=subprocess.DEVNULL, check=True)
        results = []
        for k in range(3):
            part = os.path.join(parts, f"part-00{k}.json")
            states[f"part_{k}"] = open(part).read()
            subprocess.run([witness, "fair", "--subproblem", part, "--time-limit", "0.05", "--threads", "1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            results.append(open(os.path.join(parts, f"part-00{k}.result.json")).read())
            states[f"result_{k}"] = results[-1]
    for name, text in states.items():
        open(os.path.join(out_dir, name + ".json"), "wb").write(b"\0" + text.encode())
        open(os.path.join(out_dir, name + ".bytes"), "wb").write(b"\1" + to_bytes(text))
    open(os.path.join(out_dir, "merge_3_results.txt"), "wb").write(b"\2" + "\n--part--\n".join(results).encode())


if __name__ == "__main__":
    main()
