#!/usr/bin/env bash
# Notifications V2 delivered by `forge serve --notify` to a local webhook (scripts/webhook-sink.py: 200 to
# everything), in memory and with --state (SQLite), next to the sink's own rate under wrk (one connection, as
# forge delivers one notification at a time per webhook) and the raw ES256 sign rate (openssl speed). N customers
# renew once each just after the start; the clock is moved past the renewals and the run is timed from there:
#   signing    from the clock's move to the first delivery: every due notification is signed first (the
#              notification, its signedTransactionInfo and signedRenewalInfo: three ES256 signatures each)
#   delivery   from the first delivery to the last
# Usage: scripts/bench-notifications.sh [customers, default 500] [forge binary, default: a release build]
#
# scripts/bench-notifications.sh batch [renewals, default 10000] [forge binary]: issue 36's large batch instead. One
# customer with a daily subscription whose periods run ahead of the clock (`renewals`), --notify to the sink; the
# clock moved 30 years ahead (POST /_forge/clock {"advance":"P30Y"}) makes every renewal due at once. Prints
#   batch delivered   from the clock's move to the last delivery, and to the first
#   clock p50/p99     GET /_forge/clock from 4 clients, each on a new connection every 20 ms, while the batch is
#                     signed and delivered (an unanswered request counts as its 10 s time limit)
#   idle CPU          the server's utime+stime (/proc/PID/stat) over 10 s with --notify and nothing due, on the wall
#                     clock (nothing is due for a day), after 5 s to settle
# Prints one row per figure: NAME<TAB>VALUE<TAB>NOTE. Needs python3, openssl; wrk for the sink's row.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=rows
if [ "${1:-}" = batch ]; then
  mode=batch
  shift
fi
customers=${1:-500}
forge=${2:-}
if [ -z "$forge" ]; then
  swift build -c release --product forge >/dev/null
  swift build -c release --product forge-http >/dev/null
  forge="$(swift build -c release --show-bin-path)/forge"
fi
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

row() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}"; }

# Sets `sink` to a new sink's URL (a function, not $(...): the sink must be this shell's child to be killed).
start_sink() {
  python3 scripts/webhook-sink.py >"$work/sink.out" 2>/dev/null &
  pids+=($!)
  for _ in $(seq 100); do grep -q listening "$work/sink.out" 2>/dev/null && break; sleep 0.05; done
  sink=$(sed -n 's/^listening \(.*\)\/$/\1/p' "$work/sink.out")
}

if [ "$mode" = batch ]; then
  renewals=$customers
  printf '{"bundleId": "com.example.daily", "now": "2025-01-01T00:00:00Z", "seed": 36, "purchases": [{"productId": "pro.daily", "purchaseDate": "2025-01-01T00:00:00Z", "period": "P1D", "renewals": %d}]}\n' \
    "$renewals" >"$work/daily.json"
  start_sink
  "$forge" serve --listen 127.0.0.1:0 --no-auth --now 2025-01-01T01:00:00Z --scenario "$work/daily.json" --notify "$sink/apple" >"$work/serve.out" 2>"$work/serve.err" &
  serve=$!
  pids+=($serve)
  for _ in $(seq 600); do grep -q '^production' "$work/serve.out" 2>/dev/null && break; sleep 0.05; done
  port=$(sed -n 's/^production  http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$work/serve.out")
  # The clock moves, then 4 clients ask the clock until every renewal is delivered (at most 600 s).
  read -r first last p50 p99 slowest count slow < <(python3 - "$port" "$sink" "$renewals" <<'PY'
import http.client, json, sys, threading, time, urllib.request
port, sink, expected = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
request = urllib.request.Request(f"http://127.0.0.1:{port}/_forge/clock", data=b'{"advance":"P30Y"}', headers={"Content-Type": "application/json"})
moved = time.time()
urllib.request.urlopen(request, timeout=30).read()
done, latencies = threading.Event(), []
def probe():
    # A new connection each time (the server spreads connections over its event loops), 50 a second per client.
    while not done.is_set():
        started = time.time()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", "/_forge/clock")
            connection.getresponse().read()
            connection.close()
        except Exception:
            pass
        latencies.append(min(time.time() - started, 10.0))
        time.sleep(0.02)
clients = [threading.Thread(target=probe) for _ in range(4)]
for client in clients: client.start()
count = {"count": 0}
while time.time() - moved < 600:
    count = json.loads(urllib.request.urlopen(sink + "/count", timeout=30).read())
    if count["count"] >= expected: break
    time.sleep(0.2)
done.set()
for client in clients: client.join()
ordered = sorted(latencies)
pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000
print(f"{(count['first'] or moved) - moved:.2f} {(count['last'] or moved) - moved:.2f} {pick(0.5):.1f} {pick(0.99):.1f} {ordered[-1] * 1000:.0f} {len(ordered)} {sum(1 for l in ordered if l >= 1)}")
PY
)
  kill "$serve" 2>/dev/null || true
  wait "$serve" 2>/dev/null || true
  row "batch of $renewals renewals delivered" "${last} s" "from POST /_forge/clock {\"advance\":\"P30Y\"} to the last delivery; the first after ${first} s"
  row "GET /_forge/clock during the batch" "p50 ${p50} ms, p99 ${p99} ms" "4 clients, a new connection every 20 ms each; $count requests, the slowest ${slowest} ms, $slow over 1 s"
  # Idle: the wall clock, so the clock moves on every tick; the next renewal is a day away.
  start_sink
  "$forge" serve --listen 127.0.0.1:0 --no-auth --scenario "$work/daily.json" --notify "$sink/apple" >"$work/idle.out" 2>"$work/idle.err" &
  idle=$!
  pids+=($idle)
  for _ in $(seq 600); do grep -q '^production' "$work/idle.out" 2>/dev/null && break; sleep 0.05; done
  sleep 5
  ticks=$(getconf CLK_TCK)
  before=$(awk '{print $14 + $15}' "/proc/$idle/stat")
  sleep 10
  after=$(awk '{print $14 + $15}' "/proc/$idle/stat")
  row "idle CPU, --notify, nothing due" "$(python3 -c "print(f'{($after - $before) / $ticks / 10 * 100:.1f} %')") of a core" \
    "utime+stime over 10 s, wall clock, the $renewals-period store; $(python3 -c "print(($after - $before))") ticks"
  exit 0
fi

# N customers of one app, each seeded apart (the same scenario twice would be the same ids), renewing on 2025-01-15.
python3 - "$work" "$customers" <<'PY'
import json, sys
work, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    json.dump({"bundleId": "com.example.bench", "now": "2025-01-01T00:00:00Z", "seed": 1000 + i,
               "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-12-15T00:00:00Z", "period": "P1M"}],
               "timeline": [{"event": "renew", "productId": "pro.monthly", "count": 1}]}, open(f"{work}/c{i}.json", "w"))
PY
scenarios=()
for ((i = 0; i < customers; i++)); do scenarios+=(--scenario "$work/c$i.json"); done

# One run: serve, move the clock past the renewals, wait for every delivery. Sets `signing` (seconds from the
# clock's move to the first delivery) and `rate` (deliveries a second from the first to the last).
run() {
  local serve port t0 result
  start_sink
  "$forge" serve --listen 127.0.0.1:0 --no-auth --now 2025-01-14T00:00:00Z "${scenarios[@]}" --notify "$sink/apple" "$@" >"$work/serve.out" 2>"$work/serve.err" &
  serve=$!
  pids+=($serve)
  for _ in $(seq 600); do grep -q '^production' "$work/serve.out" 2>/dev/null && break; sleep 0.05; done
  port=$(sed -n 's/^production  http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$work/serve.out")
  t0=$(python3 -c 'import time; print(time.time())')
  curl -s -o /dev/null -X POST "http://127.0.0.1:$port/_forge/clock" -H "Content-Type: application/json" -d '{"now":"2025-01-16T00:00:00Z"}'
  for _ in $(seq 1200); do
    result=$(curl -s "$sink/count")
    [ "$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["count"])' "$result")" -ge "$customers" ] && break
    sleep 0.1
  done
  kill "$serve" 2>/dev/null || true
  wait "$serve" 2>/dev/null || true
  read -r signing rate < <(python3 - "$result" "$t0" <<'PY'
import json, sys
r, t0 = json.loads(sys.argv[1]), float(sys.argv[2])
print(f"{r['first'] - t0:.3f} {(r['count'] - 1) / max(r['last'] - r['first'], 1e-9):.0f}")
PY
)
}

sign=$(openssl speed -seconds 2 ecdsap256 2>/dev/null | awk '/256 bits ecdsa \(nistp256\)/ {print $(NF-1)}' | tail -1)
row "ES256 sign (openssl speed, one core)" "${sign%.*}/s" "the physical limit: three signatures a notification"
# In process, one thread: forge's own ES256 (RFC 6979, deterministic) and whole signed notifications.
read -r own_sign own_make < <("$forge" bench make --jws notification --seconds 2 --rounds 3 --jobs 1 --json \
  | python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["signPerSecond"][0], r["makePerSecond"][0])')
row "ES256 sign in forge (RFC 6979, one thread)" "$own_sign/s" "deterministic k: $(python3 -c "print(f'{$own_sign / $sign:.2f}')") x openssl speed's"
row "notification signed in process (forge bench make --jws)" "$own_make/s" \
  "$(python3 -c "print(f'{$own_make / $own_sign:.2f} x forge\'s ES256 sign rate ({1000 / $own_make:.2f} ms each)')")"
run
sign_memory=$signing rate_memory=$rate
row "notifications signed, in memory" "$(python3 -c "print(f'{$customers / $sign_memory:.0f}/s')")" \
  "$(python3 -c "print(f'{3 * $customers / $sign_memory / $sign:.2f} x the ES256 sign rate ({$sign_memory * 1000 / $customers:.2f} ms each)')")"
row "notifications delivered, in memory" "$rate_memory/s" "one at a time, in timeline order"
run --state "$work/state.db"
row "notifications delivered, --state (SQLite)" "$rate/s" "$(python3 -c "print(f'{$rate / $rate_memory:.2f} x in memory: each enqueue and attempt written first')")"
if command -v wrk >/dev/null; then
  start_sink
  printf 'wrk.method = "POST"\nwrk.body = "{\\"signedPayload\\":\\"x\\"}"\nwrk.headers["Content-Type"] = "application/json"\n' >"$work/post.lua"
  sink_rate=$(wrk -t1 -c1 -d3s -s "$work/post.lua" "$sink/apple" | awk '/Requests\/sec/ {print $2}')
  row "the sink under wrk (-t1 -c1)" "${sink_rate%.*}/s" "$(python3 -c "print(f'forge delivers at {$rate_memory / $sink_rate:.2f} x the sink\\'s own rate')")"
fi
