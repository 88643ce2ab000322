#!/usr/bin/env python3
"""The resident memory of `forge serve` under what a client can send (issue 36, item 4): 20 valid consumption
reports with a 30 MB extra member, 5 mass extensions with a 30 MB productId, 3,000 unauthenticated GETs of a
60 KB path. Each attack has a server of its own; RSS (and the peak, VmHWM) from /proc before, after, and after
DELETE /_forge/log. Linux only (/proc, ss).

Usage: scripts/serve-memory.py [forge binary, default .build/debug/forge]
"""
import base64, http.client, json, os, re, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
forge = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, ".build/debug/forge")
scenario = os.path.join(root, "examples/server-api/sandbox-customer.json")


def start(extra):
    """A server on a free port: the process, its port, and the pid that listens (forge hands serving to forge-http)."""
    proc = subprocess.Popen([forge, "serve", "--listen", "127.0.0.1:0", "--scenario", scenario, "--now", "2025-01-01T00:00:00Z"] + extra,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = None
    for line in proc.stdout:
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if match:
            port = int(match.group(1))
            break
    if port is None:
        raise SystemExit("forge serve printed no URL")
    for _ in range(100):
        listing = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
        match = re.search(r"pid=(\d+)", listing)
        if match:
            return proc, port, int(match.group(1))
        time.sleep(0.1)
    raise SystemExit("no process listens on the printed port")


def rss(pid):
    status = open(f"/proc/{pid}/status").read()
    value = lambda key: int(re.search(key + r":\s+(\d+) kB", status).group(1)) // 1024
    return value("VmRSS"), value("VmHWM")


def request(conn, method, path, body=None):
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"} if body is not None else {})
    response = conn.getresponse()
    return response.status, response.read()


def payload(jws):
    part = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def consumption(conn):
    # Any id of the customer finds its history: the first purchase's, from its receipt-less JWS.
    first = subprocess.run([forge, "jws", "make", "transaction", "-q", "--spec", scenario], capture_output=True, text=True).stdout.strip()
    _, body = request(conn, "GET", f"/sandbox/inApps/v2/history/{payload(first)['originalTransactionId']}")
    lifetime = next(t["transactionId"] for t in map(payload, json.loads(body)["signedTransactions"]) if t["productId"] == "lifetime")
    junk = "x" * 30_000_000
    body = json.dumps({"customerConsented": True, "sampleContentProvided": False, "deliveryStatus": "DELIVERED", "extra": junk})
    return [request(conn, "PUT", f"/sandbox/inApps/v2/transactions/consumption/{lifetime}", body)[0] for _ in range(20)]


def mass(conn):
    product = "p" * 30_000_000
    return [request(conn, "POST", "/sandbox/inApps/v1/subscriptions/extend/mass",
                    json.dumps({"extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": f"R{n}", "productId": product}))[0] for n in range(5)]


def long_paths(conn):
    path = "/inApps/v1/" + "a" * 60_000
    return [request(conn, "GET", path)[0] for _ in range(3000)]


for name, extra, attack in [
    ("20 consumption reports with a 30 MB member", ["--no-auth"], consumption),
    ("5 mass extensions with a 30 MB productId", ["--no-auth"], mass),
    ("3,000 unauthenticated GETs of a 60 KB path", [], long_paths),
]:
    proc, port, pid = start(extra)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        before = rss(pid)
        statuses = attack(conn)
        after = rss(pid)
        request(conn, "DELETE", "/_forge/log")
        cleared = rss(pid)
        print(f"{name}: HTTP {sorted(set(statuses))}; RSS {before[0]} MB before, {after[0]} MB after (peak {after[1]} MB), "
              f"{cleared[0]} MB after DELETE /_forge/log")
    finally:
        proc.terminate()
        proc.wait()
