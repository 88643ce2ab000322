#!/usr/bin/env bash
# The App Store Server API of `forge serve` under wrk (-t 1 -c 8) on loopback, next to /verifyReceipt on the same
# server: requests/s and p99 latency for Get Transaction Info and a 20-transaction history page, answered from the
# cache (a pinned clock: the same bytes, no new signature) and rendered afresh (X-Forge-Now moves every request).
# Usage: scripts/bench-server-api.sh [seconds per row, default 5] [forge binary, default: a release build]
# Prints one row per figure: NAME<TAB>REQUESTS/S<TAB>P99. Needs wrk (apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
forge=${2:-}
if [ -z "$forge" ]; then
  swift build -c release --product forge >/dev/null
  swift build -c release --product forge-http >/dev/null
  forge="$(swift build -c release --show-bin-path)/forge"
fi
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 69; }
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$work"' EXIT
now=2025-01-01T00:00:00Z
sandbox=examples/server-api/sandbox-customer.json
latest=$("$forge" jws make transaction -q --spec "$sandbox" | cut -d. -f2 | python3 -c 'import base64, json, sys; t = sys.stdin.read().strip(); print(json.loads(base64.urlsafe_b64decode(t + "=" * (-len(t) % 4)))["transactionId"])')
"$forge" make -q --product pro.monthly --renewals 2 --now "$now" -o "$work/receipt.der"
python3 - "$work" <<'PY'
import base64, json, sys
work = sys.argv[1]
body = json.dumps({"receipt-data": base64.b64encode(open(work + "/receipt.der", "rb").read()).decode()})
open(work + "/verify.lua", "w").write('request = function()\n  return wrk.format("POST", "/verifyReceipt", {["Content-Type"] = "application/json"}, [==[' + body + ']==])\nend\n')
# A new clock every request (one second apart, from 2025-01-02): nothing is answered from the cache.
open(work + "/moving.lua", "w").write('''n = 0
request = function()
  n = n + 1
  local s = n % 2000000
  local now = string.format("2025-%02d-%02dT%02d:%02d:%02dZ", 2 + math.floor(s / 2419200) % 10, 1 + math.floor(s / 86400) % 28, math.floor(s / 3600) % 24, math.floor(s / 60) % 60, s % 60)
  return wrk.format("GET", nil, {["X-Forge-Now"] = now})
end
''')
PY
"$forge" serve --listen 127.0.0.1:0 --now "$now" --no-auth --scenario "$sandbox" --scenario examples/server-api/production-customer.json >"$work/serve.out" &
server=$!
until grep -q "server api" "$work/serve.out" 2>/dev/null; do sleep 0.1; done
url=$(grep -o 'http://[0-9.]*:[0-9]*' "$work/serve.out" | head -1)
measure() {  # name, path, lua script or ""
  local output
  output=$(wrk -t 1 -c 8 -d "${seconds}s" --latency ${3:+-s "$3"} "$url$2")
  printf '%s\t%s\t%s\n' "$1" "$(echo "$output" | awk '/Requests\/sec/ {print int($2)}')" "$(echo "$output" | awk '$1 == "99%" {print $2}')"
}
measure "verifyReceipt, valid subscription" /verifyReceipt "$work/verify.lua"
measure "transaction info, cached" "/sandbox/inApps/v1/transactions/$latest"
measure "transaction info, rendered" "/sandbox/inApps/v1/transactions/$latest" "$work/moving.lua"
measure "history page of 20, cached" "/sandbox/inApps/v2/history/$latest"
measure "history page of 20, rendered" "/sandbox/inApps/v2/history/$latest" "$work/moving.lua"
