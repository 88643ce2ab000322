#!/usr/bin/env bash
# Every speed figure of issue 11 / DESIGN §7, side by side, measured in one run on this machine:
#   per call   forge --version and forge make (processes), the naive openssl CLI pipeline and the Python
#              baseline (../shared/baselines) making the same receipt shape, one receipt per call
#   batch      forge make --count with 1 job and with every core, the raw RSA-2048 sign rate (forge bench make,
#              openssl speed), the Python baseline's own loop
#   validator  the reference validator in process (whole corpus, receipts alone, StoreKit 2 JWS alone) next to the
#              P-256 verify rate, over stdio and over HTTP, and wrk on the same endpoint
#   serve      wrk against forge serve's /verifyReceipt, without and with a server-side history, and the App Store
#              Server API's transaction info and history pages, cached and rendered (scripts/bench-server-api.sh);
#              notifications signed and delivered to a local webhook, in memory and with --state, next to the
#              raw ES256 sign rate (scripts/bench-notifications.sh)
#   release    scripts/release.sh's tarball: its size, and the static forge's start-up next to the build's
# Usage: scripts/bench.sh [calls, default 50] [batch receipts, default 4000] [seconds per validator target, default 5]
# Needs: a release build (done here), openssl, python3 (a venv with pyasn1 and cryptography is made in
# .oracles/bench), hyperfine and wrk (apt-get install hyperfine wrk; without them those rows are skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-50}
batch=${2:-4000}
seconds=${3:-5}
cores=$(nproc)
baselines=../shared/baselines
swift build -c release --product forge >/dev/null
swift build -c release --product forge-http >/dev/null
forge="$(swift build -c release --show-bin-path)/forge"
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$work" "${batchdir:-}"' EXIT
rows=()
row() { rows+=("$(printf '%-52s %14s   %s' "$1" "$2" "${3:-}")"); printf '%-52s %14s   %s\n' "$1" "$2" "${3:-}" >&2; }
ms_per_call() { python3 -c "import sys; print(f'{$1 * 1000 / $2:.1f} ms')"; }
now=2025-01-01T00:00:00Z

# The CA the baselines read: the bundled TEST PKI's leaf, key, intermediate and root.
mkdir -p "$work/ca"
cp Certificates/receipt-signing.pem "$work/ca/leaf.pem"; cp Certificates/receipt-signing.key.pem "$work/ca/leaf.key"
cp Certificates/wwdr-g5.pem "$work/ca/inter.pem"; cp Certificates/root.pem "$work/ca/root.pem"

python=python3
if [ -f "$baselines/py-forge.py" ]; then
  if [ ! -x .oracles/bench/bin/python ]; then
    python3 -m venv .oracles/bench && .oracles/bench/bin/pip install -q pyasn1 cryptography >/dev/null || true
  fi
  [ -x .oracles/bench/bin/python ] && python=.oracles/bench/bin/python
fi

echo "== per call ($calls calls each, wall time per call)" >&2
if command -v hyperfine >/dev/null; then
  hyperfine -N -w 5 -r "$calls" --export-json "$work/calls.json" --prepare "rm -f $work/one.der" \
    "$forge --version" "$forge make --product com.example.pro --expired --now $now -o $work/one.der" >/dev/null 2>&1
  read -r version make < <(python3 -c "import json; r=json.load(open('$work/calls.json'))['results']; print(r[0]['mean']*1000, r[1]['mean']*1000)")
  row "forge --version" "$(printf '%.1f ms' "$version")"
  row "forge make (one receipt per process)" "$(printf '%.1f ms' "$make")" "$(python3 -c "print(f'{$make/$version:.2f} x --version (target <= 1.5)')")"
else
  row "forge make per call" "skipped" "hyperfine not installed"
fi
start=$(date +%s.%N)
"$baselines/naive-openssl-forge.sh" "$calls" "$work/naive" "$work/ca" >/dev/null 2>&1 || true
naive=$(python3 -c "print(($(date +%s.%N) - $start) * 1000 / $calls)")
row "naive openssl pipeline (2 processes per receipt)" "$(printf '%.1f ms' "$naive")" \
  "$( [ -n "${make:-}" ] && python3 -c "print(f'forge make is {$naive/$make:.2f}x faster')")"
if [ "$python" != python3 ]; then
  start=$(date +%s.%N)
  for ((i = 0; i < calls; i++)); do "$python" "$baselines/py-forge.py" 1 "$work/py1" "$work/ca" >/dev/null; done
  pycall=$(python3 -c "print(($(date +%s.%N) - $start) * 1000 / $calls)")
  row "Python baseline (one process per receipt)" "$(printf '%.1f ms' "$pycall")"
fi

echo "== batch ($batch receipts)" >&2
"$forge" bench make --seconds 6 --rounds 5 --json >"$work/make.json" 2>/dev/null
read -r sign1 signN make1 makeN < <(python3 -c "import json; d=json.load(open('$work/make.json')); print(*d['signPerSecond'], *d['makePerSecond'])")
speed=$(openssl speed -seconds 3 rsa2048 2>/dev/null | awk '/^rsa 2048/ {print int($6)}')
row "openssl speed rsa2048 sign/s (1 core)" "$speed"
row "raw RSA-2048 sign/s in forge (1 core / $cores)" "$sign1 / $signN"
row "forge make in process receipts/s (1 / $cores)" "$make1 / $makeN" "$(python3 -c "print(f'{$make1/$sign1:.2f} of raw sign, {$make1/$speed:.2f} of openssl speed')")"
# Into a tmpfs when there is one, so the figure is the forge's and not the disk's (files are written without fsync).
batchdir="$work/batch"; [ -d /dev/shm ] && batchdir=$(mktemp -d -p /dev/shm)
for jobs in 1 "$cores"; do
  rm -rf "$batchdir"
  start=$(date +%s.%N)
  "$forge" make --product com.example.pro --count "$batch" --out "$batchdir" --seed 1 --now "$now" --jobs "$jobs" -q
  rate=$(python3 -c "print(int($batch / ($(date +%s.%N) - $start)))")
  [ "$jobs" = 1 ] && batch1=$rate
  row "forge make --count $batch --jobs $jobs (files) receipts/s" "$rate" "$(python3 -c "print(f'{$rate/$sign1/$jobs:.2f} of raw sign per core')")"
done
if [ "$python" != python3 ]; then
  pyrate=$("$python" "$baselines/py-forge.py" 500 "$work/py" "$work/ca" | tail -1 | awk '{print $1}')
  row "Python baseline loop receipts/s (1 process)" "$pyrate" "$(python3 -c "print(f'forge --jobs 1 is {$batch1/$pyrate:.1f}x')")"
fi
naiverate=$("$baselines/naive-openssl-forge.sh" 100 "$work/naive2" "$work/ca" 2>/dev/null | tail -1 | awk '{print $1}')
rm -rf "$batchdir"
row "naive openssl pipeline receipts/s" "$naiverate" "$(python3 -c "print(f'forge --jobs 1 is {$batch1/$naiverate:.1f}x')")"

echo "== validator (vectors/s, --parallel 8, $seconds s per target)" >&2
"$forge" bench runner --vectors Vectors --seconds "$seconds" --parallel 8 --json \
  --target swift:reference --target "stdio:$forge validate --harness --vectors Vectors" >"$work/runner.json"
read -r inproc stdio < <(python3 -c "import json; r=json.load(open('$work/runner.json')); print(*[int(x['vectorsPerSecond']) for x in r])")
bench_rate() { "$forge" bench runner --vectors Vectors --seconds "$seconds" --parallel 8 --json --target swift:reference "$@" | python3 -c "import json,sys; print(int(json.load(sys.stdin)[0]['vectorsPerSecond']))"; }
jws=$(bench_rate --run 'jws-*')
jws_small=$(bench_rate --run 'jws-*' --skip '*-1mib')
receipts=$(bench_rate --skip 'jws-*')
p256=$(openssl speed -seconds 3 ecdsap256 2>/dev/null | awk '/256 bits ecdsa \(nistp256\)/ {print int($NF)}' | tail -1)
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
row "openssl speed ecdsap256 verify/s (1 core)" "$p256" "a JWS vector's limit: one P-256 verify (the chain verdict cached)"
row "reference validator in process, whole corpus" "$inproc" "target >= 10000; $(ratio "$inproc" "$p256") x the P-256 verify rate"
row "  receipts alone (--skip 'jws-*')" "$receipts"
row "  StoreKit 2 JWS alone (--run 'jws-*')" "$jws" "target >= 10000; $(ratio "$jws" "$p256") x P-256 verify"
row "  JWS without the two 1 MiB vectors" "$jws_small" "$(ratio "$jws_small" "$p256") x P-256 verify (the two 1.4 MB vectors left out)"
row "reference validator over stdio" "$stdio" "target >= 3000"
python3 scripts/wrk-requests.py "$work/requests.lua"
# The server with one event-loop thread, then one per core: on a small machine the runner and the server
# share the cores, while wrk costs almost none, so both are shown.
for threads in 1 "$cores"; do
  "$forge" validate --listen 127.0.0.1:0 --vectors Vectors --threads "$threads" >"$work/server.out" &
  server=$!
  until grep -q listening "$work/server.out" 2>/dev/null; do sleep 0.1; done
  url=$(grep -o 'http://[0-9.]*:[0-9]*' "$work/server.out")
  http=$("$forge" bench runner --vectors Vectors --seconds "$seconds" --parallel 8 --json --target "$url" | python3 -c "import json,sys; print(int(json.load(sys.stdin)[0]['vectorsPerSecond']))")
  row "reference validator over HTTP, server --threads $threads" "$http"
  if command -v wrk >/dev/null; then
    wrk_rate=$(wrk -t 1 -c 8 -d "${seconds}s" -s "$work/requests.lua" "$url" | awk '/Requests\/sec/ {print int($2)}')
    row "wrk on the same endpoint (requests/s)" "$wrk_rate" "$(python3 -c "print(f'forge run over HTTP = {$http/$wrk_rate:.2f} x wrk (target >= 0.8)')")"
  else
    row "wrk" "skipped" "wrk not installed"
  fi
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
done

echo "== forge serve (wrk -t 1 -c 8, $seconds s each)" >&2
serve_lua() {  # $1 receipt, $2 out.lua: POST one verifyReceipt body to /verifyReceipt, over and over
  python3 - "$1" "$2" <<'PY'
import base64, json, sys
body = json.dumps({"receipt-data": base64.b64encode(open(sys.argv[1], "rb").read()).decode(), "password": "s3cret"})
open(sys.argv[2], "w").write('request = function()\n  return wrk.format("POST", "/verifyReceipt", {["Content-Type"] = "application/json"}, [==[' + body + ']==])\nend\n')
PY
}
"$forge" make -q --product pro.monthly --renewals 2 --now "$now" -o "$work/serve.der"
"$forge" make -q --spec examples/serve-history.json -o "$work/history.der"
serve_lua "$work/serve.der" "$work/serve.lua"
serve_lua "$work/history.der" "$work/history.lua"
for mode in plain history; do
  extra=(); lua="$work/serve.lua"
  [ "$mode" = history ] && { extra=(--scenario examples/serve-history.json); lua="$work/history.lua"; }
  "$forge" serve --listen 127.0.0.1:0 --now 2025-04-05T00:00:00Z --shared-secret s3cret "${extra[@]}" >"$work/serve.out" &
  server=$!
  until grep -q production "$work/serve.out" 2>/dev/null; do sleep 0.1; done
  url=$(grep -o 'http://[0-9.]*:[0-9]*' "$work/serve.out" | head -1)
  if command -v wrk >/dev/null; then
    rate=$(wrk -t 1 -c 8 -d "${seconds}s" -s "$lua" "$url" | awk '/Requests\/sec/ {print int($2)}')
    case $mode in
      plain) row "forge serve /verifyReceipt, valid subscription" "$rate" "requests/s (validate + decode + JSON)" ;;
      history) row "forge serve /verifyReceipt, with --scenario history" "$rate" "requests/s (+ re-issue latest_receipt: one RSA sign)" ;;
    esac
  fi
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
done

if command -v wrk >/dev/null; then
  while IFS=$'\t' read -r name rate p99; do
    row "forge serve Server API: $name" "$rate" "requests/s, p99 $p99"
  done < <(scripts/bench-server-api.sh "$seconds" "$forge")
fi

while IFS=$'\t' read -r name value note; do
  row "forge serve --notify: $name" "$value" "$note"
done < <(scripts/bench-notifications.sh 500 "$forge")

while read -r line; do row "forge serve start-up to URLs ($(echo "$line" | cut -d' ' -f1))" "$(echo "$line" | grep -o 'median [0-9]* ms' | cut -d' ' -f2-)" "median of 10"; done \
  < <(python3 scripts/serve-startup.py "$forge" | sed 's/^--scenario examples\/serve-history.json/scenario/; s/^--tls/tls/')

echo "== release binaries (scripts/release.sh: static Swift runtime, stripped)" >&2
dist="$work/dist"
if bash scripts/release.sh --out "$dist" >/dev/null 2>"$work/release.err"; then
  tarball=$(ls "$dist"/receipt-forge-*-linux-*.tar.xz)
  mkdir -p "$work/unpacked" && tar -xJf "$tarball" -C "$work/unpacked"
  static=$(ls -d "$work"/unpacked/receipt-forge-*/bin)
  row "release tarball (MB)" "$(du -m "$tarball" | cut -f1)" "forge $(du -m "$static/forge" | cut -f1) MB, forge-http $(du -m "$static/forge-http" | cut -f1) MB stripped; scripts/bench-release.sh has the rest"
  if command -v hyperfine >/dev/null; then
    hyperfine -N -w 5 -r 50 --export-json "$work/start.json" "$forge --version" "$static/forge --version" >/dev/null 2>&1
    read -r dynamic_ms static_ms < <(python3 -c "import json; r=json.load(open('$work/start.json'))['results']; print(*[f'{x[\"mean\"]*1000:.1f}' for x in r])")
    row "forge --version, static release (ms)" "$static_ms" "$(python3 -c "print(f'{$static_ms / $dynamic_ms:.2f}')") x the toolchain-linked build ($dynamic_ms ms)"
  fi
else
  row "release binaries" "skipped" "scripts/release.sh failed: $(tail -1 "$work/release.err")"
fi

echo
echo "forge bench — $(date -u +%Y-%m-%dT%H:%MZ), $cores cores, $(uname -m)"
printf '%s\n' "${rows[@]}"
