#!/usr/bin/env bash
# The release's figures (issue 41), measured in one run: sizes of the tarball as shipped (xz) and of the same tar
# as gzip, and of a one-binary release (forge-http alone, which answers every command forge does); per-call
# times of forge and forge-http for `--version` and `make` (hyperfine, ratios in one run), and of another forge
# when given (an older release's, to compare with).
# Usage: scripts/bench-release.sh DIST [OTHER_FORGE]   (DIST: what scripts/release.sh --out DIST wrote)
set -euo pipefail
dist=${1:?usage: scripts/bench-release.sh DIST [OTHER_FORGE]}
other=${2:-}
for tool in tar xz gzip hyperfine python3; do
  command -v "$tool" >/dev/null || { echo "bench-release.sh: $tool is needed and not on PATH" >&2; exit 69; }
done
tarball=$(ls "$dist"/receipt-forge-*-linux-*.tar.xz)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xJf "$tarball" -C "$work"
name=$(basename "$tarball" .tar.xz)
bin=$work/$name/bin
mb() { python3 -c "print(f'{$1 / 1e6:.1f}')"; }
size() { stat -c %s "$1"; }

xz -dc "$tarball" >"$work/release.tar"
gzip -9 -n -c "$work/release.tar" >"$work/release.tar.gz"
(cd "$work" && tar --sort=name --exclude="$name/bin/forge" -cf - "$name" | xz -9 -T1 >"$work/one-binary.tar.xz")
printf '%-48s %10s\n' "forge, stripped (MB)" "$(mb "$(size "$bin/forge")")"
printf '%-48s %10s\n' "forge-http, stripped (MB)" "$(mb "$(size "$bin/forge-http")")"
printf '%-48s %10s\n' "tarball as shipped, xz -9 (MB)" "$(mb "$(size "$tarball")")"
printf '%-48s %10s\n' "the same tar, gzip -9 (MB)" "$(mb "$(size "$work/release.tar.gz")")"
printf '%-48s %10s\n' "one binary (forge-http alone), xz -9 (MB)" "$(mb "$(size "$work/one-binary.tar.xz")")"

commands=("$bin/forge --version" "$bin/forge-http --version"
  "$bin/forge make --product com.example.pro --seed 1 -o $work/a.der" "$bin/forge-http make --product com.example.pro --seed 1 -o $work/b.der")
[ -n "$other" ] && commands+=("$other --version" "$other make --product com.example.pro --seed 1 -o $work/c.der")
hyperfine -N -w 5 -r 60 --export-json "$work/calls.json" "${commands[@]}" >/dev/null 2>&1
python3 - "$work/calls.json" "$work/" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
mean = {r["command"].replace(sys.argv[2], ""): r["mean"] * 1000 for r in results}
for command, ms in mean.items():
    print(f"{command[-60:]:<60} {ms:6.1f} ms")
names = list(mean)
print(f"forge-http / forge, --version: {mean[names[1]] / mean[names[0]]:.2f}x; make: {mean[names[3]] / mean[names[2]]:.2f}x")
if len(names) == 6:
    print(f"other / forge, --version: {mean[names[4]] / mean[names[0]]:.2f}x; make: {mean[names[5]] / mean[names[2]]:.2f}x")
PY
