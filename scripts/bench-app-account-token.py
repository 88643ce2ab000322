#!/usr/bin/env python3
"""Set App Account Token, again and again (issue 36, item 6): one keep-alive connection, sequential PUTs from
Python's http.client on the same purchase. Prints the rate of the first 500 PUTs and of 500 more after 5,000, in
memory or with --state (a new file in a temporary folder).

Usage: scripts/bench-app-account-token.py [forge binary, default .build/debug/forge] [--state]
"""
import base64, http.client, json, os, re, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
arguments = [a for a in sys.argv[1:] if a != "--state"]
forge = arguments[0] if arguments else os.path.join(root, ".build/debug/forge")
state = "--state" in sys.argv
scenario = os.path.join(root, "examples/server-api/sandbox-customer.json")
folder = tempfile.mkdtemp(prefix="forge-tokens-")
extra = ["--state", os.path.join(folder, "state.db")] if state else []
first = subprocess.run([forge, "jws", "make", "transaction", "-q", "--spec", scenario], capture_output=True, text=True).stdout.strip()
part = first.split(".")[1]
original = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))["originalTransactionId"]
proc = subprocess.Popen([forge, "serve", "--listen", "127.0.0.1:0", "--no-auth", "--scenario", scenario, "--now", "2025-01-01T00:00:00Z"] + extra,
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    port = next(int(m.group(1)) for m in (re.search(r"http://127\.0\.0\.1:(\d+)/", line) for line in proc.stdout) if m)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def put(number):
        conn.request("PUT", f"/sandbox/inApps/v1/transactions/{original}/appAccountToken",
                     body='{"appAccountToken":"00000000-0000-4000-8000-%012d"}' % number, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            raise SystemExit(f"PUT {number}: HTTP {response.status}")

    def rate(start, count):
        began = time.perf_counter()
        for number in range(start, start + count):
            put(number)
        return count / (time.perf_counter() - began)

    early = rate(0, 500)
    for number in range(500, 5000):
        put(number)
    late = rate(5000, 500)
    print(f"{'with' if state else 'without'} --state: the first 500 PUTs {early:.0f}/s, 500 more after 5,000 {late:.0f}/s")
finally:
    proc.terminate()
    proc.wait()
    for name in os.listdir(folder):
        os.remove(os.path.join(folder, name))
    os.rmdir(folder)
