#!/usr/bin/env bash
# Runner throughput through every transport against the reference validator, and the HTTP transport
# against wrk on the same endpoint with the same vectors and concurrency (DESIGN §7).
# Usage: scripts/bench-runner.sh [seconds per target, default 10] [concurrency, default 8]
# Needs: a release build (done here), python3, and wrk for the comparison (apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
concurrency=${2:-8}
swift build -c release --product forge >/dev/null
swift build -c release --product forge-http >/dev/null  # forge hands --listen over to it
forge="$(swift build -c release --show-bin-path)/forge"
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT

"$forge" validate --listen 127.0.0.1:0 --vectors Vectors >"$work/server.out" &
server=$!
until grep -q listening "$work/server.out" 2>/dev/null; do sleep 0.1; done
url=$(grep -o 'http://[0-9.]*:[0-9]*' "$work/server.out")

# A stdio harness that accepts everything as fast as Python can: the stdio transport's own cost.
cat >"$work/accept-all.py" <<'PY'
import json, sys
for line in sys.stdin:
    if '"validate"' in line:
        seq = json.loads(line)["seq"]
        sys.stdout.write('{"type":"result","seq":%d,"verdict":"accept"}\n' % seq)
    elif '"hello"' in line:
        sys.stdout.write(json.dumps({"type": "hello", "protocol": 1, "implementation": "accept-all", "features": ["device-hash", "xcode", "sha1", "robustness", "large"],
                                     "errorGranularity": "none", "clockInjection": True, "maxConcurrency": 64}) + "\n")
    else:
        break
    sys.stdout.flush()
PY

"$forge" bench runner --vectors Vectors --seconds "$seconds" --parallel "$concurrency" \
  --target swift:no-op --target "stdio:python3 $work/accept-all.py" --target swift:reference \
  --target "stdio:$forge validate --harness --vectors Vectors" \
  --target "$url" | tee "$work/runner.txt"
"$forge" bench runner --vectors Vectors --seconds "$seconds" --parallel "$concurrency" --target "exec:$forge validate --harness --vectors Vectors"
"$forge" bench runner --vectors Vectors --seconds "$seconds" --parallel "$concurrency" --target "$url/verifyReceipt" --mapping verifyreceipt

command -v wrk >/dev/null || { echo "wrk not installed: no load-generator comparison"; exit 0; }
# wrk sends the runner's own requests: every vector's validate message, in turn, to the same endpoint.
python3 scripts/wrk-requests.py "$work/requests.lua"
wrk -t 1 -c "$concurrency" -d "${seconds}s" -s "$work/requests.lua" "$url" | tee "$work/wrk.txt"
runner=$(awk -v url="$url" '$3 == url {print $1}' "$work/runner.txt")
wrk_rate=$(awk '/Requests\/sec/ {print int($2)}' "$work/wrk.txt")
echo "HTTP: runner $runner vectors/s, wrk $wrk_rate requests/s, ratio $(python3 -c "print(f'{$runner/$wrk_rate:.2f}')")"
