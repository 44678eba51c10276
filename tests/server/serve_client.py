"""What the server tests over real sockets share: the checks' tally and starting `witness serve`."""
import re
import subprocess


class Checks:
    """One line per failed check; `summary()` says how many passed and failed."""

    def __init__(self):
        self.failures = []
        self.passes = 0

    def __call__(self, name, ok, detail=""):
        if ok:
            self.passes += 1
        else:
            self.failures.append(name)
            print(f"FAIL {name}: {detail}"[:800], flush=True)

    def summary(self, what):
        print(f"{what}: {self.passes} passed, {len(self.failures)} failed")
        return 1 if self.failures else 0


def start_server(witness, root, *extra):
    """`witness serve --root ROOT --port 0 EXTRA...`: (process, port, token) once it printed its URL."""
    proc = subprocess.Popen([witness, "serve", "--root", root, "--port", "0", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=(\w+)", line)
    if not m:
        proc.kill()
        raise SystemExit(f"serve printed no URL: {line!r} {proc.stderr.read()[:500]}")
    return proc, int(m.group(1)), m.group(2)
