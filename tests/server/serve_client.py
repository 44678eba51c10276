"""What the server tests over real sockets share: the checks' tally, starting `witness serve` and
one request with its token."""
import http.client
import json
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


def request(port, token, method, path, body=None, headers=None, timeout=10):
    """(status, body, parsed JSON or the body's first 200 bytes); status -1 with the error's text (and
    body b"") if the connection failed."""
    h = {"X-Witness-Token": token}
    h.update(headers or {})
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        try:
            return r.status, data, json.loads(data)
        except ValueError:
            return r.status, data, data[:200]
    except (OSError, http.client.HTTPException) as e:
        return -1, b"", repr(e)
