#!/usr/bin/env bash
# Two builds of `forge serve` side by side, in one run, interleaved so the machine's noise falls on both alike
# (issue 38's figures): wrk -t1 -c8 on /verifyReceipt and the Server API (scripts/bench-server-api.sh), then the
# p99 of GET /_forge/clock while 10,000 notifications are signed and delivered (scripts/bench-notifications.sh batch).
# Usage: scripts/bench-serve-compare.sh BEFORE_DIR AFTER_DIR [seconds per wrk row, default 5] [rounds, default 2]
# Each DIR holds a release `forge` and `forge-http`. Prints ROW<TAB>BUILD<TAB>VALUE…, one line per round, then
# the medians. Needs wrk, python3, openssl.
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?BEFORE_DIR}
after=${2:?AFTER_DIR}
seconds=${3:-5}
rounds=${4:-2}
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for round in $(seq 1 "$rounds"); do
  for build in before after; do
    dir=$before
    [ "$build" = after ] && dir=$after
    scripts/bench-server-api.sh "$seconds" "$dir/forge" | sed "s/^/$build\t/" | tee -a "$results"
    scripts/bench-notifications.sh batch 10000 "$dir/forge" | sed "s/^/$build\t/" | tee -a "$results"
  done
done
echo "# medians over $rounds rounds (requests/s, p99; or the batch's value)"
python3 - "$results" <<'PY'
import collections, statistics, sys
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    parts = line.rstrip("\n").split("\t")
    if len(parts) < 3:
        continue
    build, name, value = parts[0], parts[1], parts[2]
    rows.setdefault(name, {}).setdefault(build, []).append((value, parts[3] if len(parts) > 3 else ""))
def number(text):
    digits = "".join(c for c in text if c.isdigit() or c == ".")
    unit = text[len(digits):] if text.startswith(digits) else ""
    try:
        value = float(digits)
    except ValueError:
        return None
    return value * {"us": 0.001, "ms": 1, "s": 1000}.get(unit.strip(), 1)
for name, builds in rows.items():
    cells = []
    for build in ("before", "after"):
        values = builds.get(build, [])
        firsts = [number(v) for v, _ in values if number(v) is not None]
        seconds_ = [number(x) for _, x in values if x and number(x) is not None]
        cell = "%g" % statistics.median(firsts) if firsts else "-"
        if seconds_:
            cell += " / p99 %g ms" % statistics.median(seconds_)
        cells.append(cell)
    print("%-44s before %-28s after %s" % (name, cells[0], cells[1]))
PY
