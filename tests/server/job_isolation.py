#!/usr/bin/env python3
"""witness serve keeps each job's solver, compiler and program away from the server (issue 45).

Usage: job_isolation.py WITNESS SOURCE_DIR

Over real sockets, checks that:
1. a program that names a secret file outside the root (`.incbin`, `.include`, `#include`, a
   linker script) is refused or fails, and no answer the server gives (job, error, inputs) carries
   the secret's bytes;
2. two concurrent Z3-hungry query jobs under a small --job-memory end on their own, a job whose
   process is killed (as by the OOM killer) fails saying so, the server stays up, and then soid's
   diabetes `verify.toml` is answered correctly within 10 s;
3. SIGTERM stops the server within 10 s while GET /api/inputs compiles a preprocessor bomb.
Prints one line per failed check and a summary; exits 1 on any failure.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

WITNESS, SRC = sys.argv[1], sys.argv[2]
SECRET = "witness-secret-7f3a9c-do-not-leak"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Checks, request, start_server  # noqa: E402

check = Checks()


class Server:
    def __init__(self, root, *extra):
        self.proc, self.port, self.token = start_server(WITNESS, root, *extra)
        self.seen = []  # every body the server sent, for the secret check

    def request(self, method, path, body=None, timeout=30):
        status, data, parsed = request(self.port, self.token, method, path, body, timeout=timeout)
        self.seen.append(data)
        return status, parsed

    def submit(self, body):
        return self.request("POST", "/api/jobs", json.dumps(body))

    def wait(self, job_id, seconds):
        """The job's final state (or its last one when `seconds` passed)."""
        end = time.time() + seconds
        job = {}
        while time.time() < end:
            status, job = self.request("GET", f"/api/jobs/{job_id}")
            if status == 200 and job.get("state") not in ("queued", "running"):
                return job
            time.sleep(0.1)
        return job

    def alive(self):
        status, _ = self.request("GET", "/api/jobs", timeout=5)
        return status == 200 and self.proc.poll() is None

    def stop(self, within):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=within)
            return True
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return False


def descendants(pid):
    """Every process below `pid` (children, their children, ...)."""
    out = []
    for child in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split():
        out.append(int(child))
        out += descendants(int(child))
    return out


def alive(pid):
    """True while `pid` runs (a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def write(root, name, text):
    with open(os.path.join(root, name), "w") as f:
        f.write(text)


# Programs that try to read the secret file while they are built or run.
def leaking_programs(secret_path):
    writer = """
#include <unistd.h>
extern const char blob[];
static void leak(void) { write(2, blob, 64); write(1, blob, 64); }
__attribute__((section(".init_array"))) void (*leak_at_start)(void) = leak;
int decide(int x) { return x > 0; }
"""
    return {
        "incbin.c": f'__asm__(".section .rodata\\n.global blob\\nblob:\\n.incbin \\"{secret_path}\\"\\n");\n' + writer,
        "include_asm.c": f'__asm__(".include \\"{secret_path}\\"");\nint decide(int x) {{ return x > 0; }}\n',
        "include_c.c": f'#include "{secret_path}"\nint decide(int x) {{ return x > 0; }}\n',
        "inline_asm.c": f'int decide(int x) {{ __asm__ volatile(".incbin \\"{secret_path}\\""); return x > 0; }}\n',
        "linker.c": f'#pragma comment(linker, "-T{secret_path}")\nint decide(int x) {{ return x > 0; }}\n',
    }


# A query whose solving Z3 cannot finish: Fermat's cubes over 64-bit integers, might-query.
HUNGRY_PROGRAM = """
long decide(long x, long y, long z, long w) {
  long a = x * x * x * y + y * y * y * z + z * z * z * w + w * w * w * x;
  long b = x * y * z * w * (x + y) * (z + w) + 17;
  if (a == b * b - 3 && x > 2 && y > 2 && z > 2 && w > 2) return 1;
  return 0;
}
"""
HUNGRY_QUERY = """
program = "hungry.c"
function = "decide"
semantics = "float64"
[inputs]
x = { role = "environment", type = "int" }
y = { role = "environment", type = "int" }
z = { role = "environment", type = "int" }
w = { role = "environment", type = "int" }
[[query]]
name = "hungry"
kind = "might"
behavior = "label == 1"
"""

# A preprocessor bomb: each macro doubles the one before it, 2^40 tokens in all.
BOMB = "#define A0 x\n" + "".join(f"#define A{i} A{i-1} A{i-1}\n" for i in range(1, 41)) + \
    "int decide(int x) { return (A40) > 0; }\n"


def main():
    root = tempfile.mkdtemp(prefix="witness-isolation-")
    outside = tempfile.mkdtemp(prefix="witness-secret-")
    try:
        secret_path = os.path.join(outside, "secret.txt")
        write(outside, "secret.txt", (SECRET + "\n") * 8)
        for name, text in leaking_programs(secret_path).items():
            write(root, name, text)
        write(root, "hungry.c", HUNGRY_PROGRAM)
        write(root, "bomb.c", BOMB)
        for f in ("agent.c", "diabetes_agent.onnx", "verify.toml"):
            shutil.copy(os.path.join(SRC, "examples/soid/diabetes", f), root)

        server = Server(root, "--max-jobs", "4", "--job-memory", "512")

        # 1. Nothing of the secret reaches the client.
        for name in leaking_programs(secret_path):
            query = f'program = "{name}"\nfunction = "decide"\n[inputs]\nx = {{ role = "environment", type = "int" }}\n' \
                    f'[[query]]\nname = "q"\nkind = "might"\nbehavior = "label == 1"\n'
            status, reply = server.submit({"kind": "query", "toml": query, "time_limit": 20})
            if status == 202:
                job = server.wait(reply["id"], 60)
                check(f"{name}: the job ends", job.get("state") in ("done", "failed"), json.dumps(job)[:300])
            server.request("GET", "/api/inputs?" + urllib.parse.urlencode({"path": name, "function": "decide"}))
        leaked = [b[:200] for b in server.seen if SECRET.encode() in b]
        check("no answer carries the secret file's bytes", not leaked, repr(leaked[:2]))

        # 2. Z3-hungry jobs die alone; a real query is answered right after them.
        ids = []
        for _ in range(2):
            status, reply = server.submit({"kind": "query", "toml": HUNGRY_QUERY, "time_limit": 15})
            check("a hungry job is accepted", status == 202, f"{status} {reply}")
            if status == 202:
                ids.append(reply["id"])
        for job_id in ids:
            job = server.wait(job_id, 60)
            check("a hungry job ends (answer or error)", job.get("state") in ("done", "failed"),
                  json.dumps(job)[:300])
        check("the server is up after the hungry jobs", server.alive(), f"exit {server.proc.poll()}")
        # A job's process killed as the kernel's OOM killer would: that job fails, saying so.
        status, reply = server.submit({"kind": "query", "toml": HUNGRY_QUERY, "time_limit": 30})
        time.sleep(1.5)
        children = subprocess.run(["pgrep", "-P", str(server.proc.pid)], capture_output=True, text=True).stdout.split()
        for pid in children:
            os.kill(int(pid), signal.SIGKILL)
        job = server.wait(reply["id"], 10) if status == 202 else {}
        check("a job whose process is killed fails, saying how", len(children) >= 1 and job.get("state") == "failed"
              and "killed by signal 9" in (job.get("error") or ""), f"{children} {json.dumps(job)[:300]}")
        with open(os.path.join(root, "verify.toml")) as f:
            verify = f.read()
        t = time.time()
        status, reply = server.submit({"kind": "query", "toml": verify})
        job = server.wait(reply["id"], 10) if status == 202 else {}
        answers = json.dumps(job.get("result", {}))
        check("verify.toml answered within 10 s after the hungry jobs",
              job.get("state") == "done" and time.time() - t < 10, f"{time.time() - t:.1f} s {json.dumps(job)[:400]}")
        check("verify.toml's answer names its query", '"verify"' in answers and '"would"' in answers, answers[:400])

        # 3. SIGTERM during a compile bomb in /api/inputs.
        bomb = threading.Thread(target=server.request, args=(
            "GET", "/api/inputs?" + urllib.parse.urlencode({"path": "bomb.c", "function": "decide"}), None, 120))
        bomb.start()
        time.sleep(2)
        spawned = descendants(server.proc.pid)  # the job processes and the compilers they run
        t = time.time()
        stopped = server.stop(within=15)
        check("SIGTERM stops the server within 10 s during a compile bomb", stopped and time.time() - t < 10,
              f"{time.time() - t:.1f} s")
        bomb.join()
        end = time.time() + 5
        while time.time() < end and any(alive(p) for p in spawned):
            time.sleep(0.1)
        leftovers = [str(p) for p in spawned if alive(p)]
        check("no job process or compiler outlives the server by 5 s", bool(spawned) and not leftovers,
              f"{len(spawned)} spawned, alive: {' '.join(leftovers)}")
        return check.summary("job isolation")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(outside, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
