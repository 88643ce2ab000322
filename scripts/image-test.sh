#!/usr/bin/env bash
# The container image, tested for real with podman (a CI step after the release, never inside swift test):
# scripts/image.sh builds it from DIST (default .build/static/dist) and writes its archive, which is loaded back;
# then the image started with no arguments (as a GitHub Actions service container starts it) is waited for,
# reached by a verifyReceipt POST and by Apple's Python client (.oracles/asl: every signed field verified under the
# image's own TEST root), `make`, `run` and `jws make` write into a mounted folder as the image's non-root user, and
# a second start configured only by FORGE_SERVE_* variables and folders mounted at /config and /state (clock,
# stores, control token, TLS, state file) is checked; each container is stopped (exit 0 on SIGTERM). Prints each
# phase's seconds.
# Where podman is not installed or cannot work at all (`podman info` fails), says so and exits 0; any other
# failure exits 1. On a VM without systemd or raised limits (this one), runs podman with runc, the cgroupfs
# manager and no default ulimits (a containers.conf of its own, unless CONTAINERS_CONF is set).
# Usage: scripts/image-test.sh [DIST]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
dist=$(cd "${1:-$root/.build/static/dist}" && pwd)
SECONDS=0
phase() { echo "image-test: $1 (${SECONDS} s)" >&2; }
die() { echo "image-test: FAILED: $*" >&2; exit 1; }

command -v podman >/dev/null || { echo "image-test: podman is not installed: the image is not tested (apt-get install podman runc)" >&2; exit 0; }
podman=(podman)
command -v runc >/dev/null && podman+=(--runtime runc)
work=$(mktemp -d "${TMPDIR:-/tmp}/receipt-forge-image-test.XXXXXX")
# Every container this run started is named receipt-forge-image-test-PID-…, so cleanup finds them all (start runs
# in a command substitution, a subshell, which could not add to a list of this shell).
prefix=receipt-forge-image-test-$$
cleanup() {
  for container in $("${podman[@]}" ps --all --quiet --filter "name=^$prefix-" 2>/dev/null); do
    "${podman[@]}" rm --force --time 0 "$container" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
if [ -z "${CONTAINERS_CONF:-}" ]; then
  printf '[containers]\ndefault_ulimits = []\n\n[engine]\ncgroup_manager = "cgroupfs"\n' >"$work/containers.conf"
  export CONTAINERS_CONF=$work/containers.conf
fi
if ! info=$("${podman[@]}" info 2>&1); then
  echo "image-test: podman cannot run here (podman info failed): the image is not tested" >&2
  echo "$info" | tail -5 >&2
  exit 0
fi
for tool in curl python3; do command -v "$tool" >/dev/null || die "$tool is needed and not on PATH"; done

phase "building the image from $dist"
archive=$(CONTAINER_ENGINE="${podman[*]}" bash "$root/scripts/image.sh" "$dist")
version=$(basename "$archive" | sed -E 's/^receipt-forge-(.*)-image-linux-.*\.tar\.gz$/\1/')
image=receipt-forge:$version
phase "loading $archive back (as docker load -i would)"
"${podman[@]}" rmi -f "$image" >/dev/null
gzip -dc "$archive" >"$work/image.tar"   # podman 4.3 loads an uncompressed archive only; docker load takes either
"${podman[@]}" load --quiet --input "$work/image.tar" >/dev/null
rm -f "$work/image.tar"
[ "$("${podman[@]}" image inspect --format '{{.Config.User}}' "$image")" = 10001:10001 ] || die "$image does not run as 10001:10001"

# A container of the image, detached, port 8080 published on a free loopback port; prints the base URL once the
# server said it is ready (its start-up lines, through "control"), within 60 s.
start() {
  local name=$prefix-$1
  shift
  "${podman[@]}" run --detach --name "$name" --publish 127.0.0.1::8080 "$@" "$image" >/dev/null || die "podman run $* failed"
  local deadline=$((SECONDS + 60))
  until "${podman[@]}" logs "$name" 2>/dev/null | grep -q '^control '; do
    [ "$("${podman[@]}" inspect --format '{{.State.Running}}' "$name")" = true ] || die "$name exited: $("${podman[@]}" logs "$name" 2>&1 | tail -5)"
    [ $SECONDS -lt $deadline ] || die "$name not ready within 60 s: $("${podman[@]}" logs "$name" 2>&1 | tail -5)"
    sleep 0.2
  done
  echo "http://$("${podman[@]}" port "$name" 8080/tcp)"
}
# Stops a container as `docker stop` does (SIGTERM) and checks the server exited 0.
stop() {
  local name=$prefix-$1
  "${podman[@]}" stop --time 10 "$name" >/dev/null
  local status
  status=$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$name")
  [ "$status" = 0 ] || die "$name exited $status after SIGTERM"
}
forge() { "${podman[@]}" run --rm --volume "$work/out:/work" "$image" "$@"; }

phase "starting $image with no arguments"
base=$(start default)
[ "$(curl -sS --max-time 10 "$base/verifyReceipt")" = '{"status":21000}' ] || die "GET $base/verifyReceipt is not {\"status\":21000}"

phase "make, run and jws make, into a mounted folder as the image's user"
mkdir -m 0777 "$work/out"
forge make -q --spec /config/scenarios/sandbox-customer.json -o receipt.der || die "forge make failed"
[ -s "$work/out/receipt.der" ] || die "forge make wrote no receipt.der in the mounted folder"
[ "$(stat -c %u "$work/out/receipt.der")" = 10001 ] || die "receipt.der is not owned by the image's user (10001)"
forge run --target swift:reference >/dev/null || die "forge run --target swift:reference (the image's corpus) failed"
jws=$(forge jws make transaction -q --spec /config/scenarios/sandbox-customer.json) || die "forge jws make failed"
transaction=$(python3 -c 'import base64, json, sys; p = sys.argv[1].split(".")[1]; print(json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))["transactionId"])' "$jws")

phase "verifyReceipt POST"
python3 - "$base/sandbox/verifyReceipt" "$work/out/receipt.der" <<'EOF' || die "verifyReceipt"
import base64, json, sys, urllib.request
body = json.dumps({"receipt-data": base64.b64encode(open(sys.argv[2], "rb").read()).decode()}).encode()
answer = json.load(urllib.request.urlopen(urllib.request.Request(sys.argv[1], body, {"Content-Type": "application/json"}), timeout=10))
assert answer["status"] == 0 and answer["receipt"]["bundle_id"] == "com.example.api", answer
assert answer["latest_receipt_info"][0]["product_id"] == "pro.monthly", answer["latest_receipt_info"][0]
EOF

"${podman[@]}" cp "$prefix-default:/opt/receipt-forge/roots" "$work/roots"   # the image's TEST roots
python=$root/.oracles/asl/bin/python
if [ -x "$python" ]; then
  phase "Apple's Python client, every signed field verified under the image's TEST root"
  calls='[{"call": "info", "transactionId": "'$transaction'"}, {"call": "statuses", "transactionId": "'$transaction'"}, {"call": "history", "transactionId": "'$transaction'"}]'
  answers=$(echo "$calls" | "$python" "$root/examples/clients/server_api_client.py" "$base" --bundle-id com.example.api --environment sandbox --root "$work/roots/jws-root-g3.pem") ||
    die "Apple's client failed"
  python3 - "$transaction" "$answers" <<'EOF' || die "Apple's client's answers"
import json, sys
info, statuses, history = json.loads(sys.argv[2])
assert info["ok"] and info["signedTransactionInfo"]["transactionId"] == sys.argv[1], info
assert info["signedTransactionInfo"]["signedDate"] == 1735689600000, "the image's clock is 2025-01-01T00:00:00Z"
assert statuses["ok"] and statuses["data"][0]["lastTransactions"][0]["status"] == 1, statuses
assert history["ok"] and len(history["signedTransactions"]) == 20 and history["hasMore"], history
EOF
else
  phase "Apple's Python client is not installed (.oracles/asl, scripts/known-results.sh --install-only .oracles): not run"
fi
stop default

phase "configured by FORGE_SERVE_* variables and folders mounted at /config and /state: clock, stores, control token, TLS, state"
mkdir -p "$work/config/scenarios"
mkdir -m 0777 "$work/state"
cp "$root/examples/server-api/production-customer.json" "$work/config/scenarios/"
base=$(start configured --volume "$work/config:/config:ro" --volume "$work/state:/state" --env FORGE_SERVE_NOW=2025-03-01T00:00:00Z \
  --env FORGE_SERVE_CONTROL_TOKEN=image-test --env FORGE_SERVE_TLS=1 --env FORGE_SERVE_STATE=/state/forge.sqlite)
python3 - "https${base#http}" "$work/roots/root.pem" <<'EOF' || die "the configured server"
import json, ssl, sys, urllib.error, urllib.request
base, tls = sys.argv[1], ssl.create_default_context(cafile=sys.argv[2])
def get(path, **headers):
    return urllib.request.urlopen(urllib.request.Request(base + path, headers=headers), timeout=10, context=tls).read().decode()
clock = json.loads(get("/_forge/clock", Authorization="Bearer image-test"))
assert clock["now"] == "2025-03-01T00:00:00Z", clock
scenarios = get("/_forge/scenarios", Authorization="Bearer image-test")
assert "com.example.prod" in scenarios and "com.example.api" not in scenarios, scenarios
try:
    get("/_forge/clock")
    raise AssertionError("the control routes answered without the token")
except urllib.error.HTTPError as error:
    assert error.code == 401, error.code
EOF
stop configured
[ -s "$work/state/forge.sqlite" ] || die "FORGE_SERVE_STATE wrote no /state/forge.sqlite"

# Documentation/container.md's Python Testcontainers snippet, run as written, through podman's Docker-compatible API.
# Two settings this machine needs and a Docker host would not: no Ryuk (its image is on Docker Hub, out of reach)
# and the connection mode (testcontainers takes this machine for a container and would ask for a gateway).
snippet=$(awk '/^# Python \(testcontainers\)/ { inside = 1 } inside && /^```/ { exit } inside { print }' "$root/Documentation/container.md")
[ -n "$snippet" ] || die "Documentation/container.md has no Python Testcontainers snippet"
if [ -x "$root/.oracles/testcontainers/bin/python" ] || { python3 -m venv "$root/.oracles/testcontainers" \
  && "$root/.oracles/testcontainers/bin/pip" install -q testcontainers==4.15.0 requests; } >/dev/null 2>&1; then
  phase "Testcontainers (Python) through podman's Docker API, the snippet of Documentation/container.md"
  "${podman[@]}" system service --time=0 "unix://$work/podman.sock" >"$work/service.log" 2>&1 &
  service=$!
  deadline=$((SECONDS + 30))
  until [ -S "$work/podman.sock" ]; do [ $SECONDS -lt $deadline ] || die "podman system service did not listen"; sleep 0.1; done
  printf '%s\n%s\n' "$snippet" 'import requests
assert requests.post(base + "/verifyReceipt", json={"receipt-data": "AAAA"}, timeout=10).json()["status"] == 21002
assert requests.get(base + "/_forge/clock", headers={"Authorization": "Bearer test"}, timeout=10).json()["now"] == "2025-01-01T00:00:00Z"
forge.stop()' \
    | sed "s/receipt-forge:0.1.0/$image/" >"$work/testcontainers_snippet.py"
  DOCKER_HOST="unix://$work/podman.sock" TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_CONNECTION_MODE=docker_host TC_HOST=127.0.0.1 \
    timeout 120 "$root/.oracles/testcontainers/bin/python" "$work/testcontainers_snippet.py" || { kill "$service"; die "the Testcontainers snippet"; }
  kill "$service"
else
  phase "testcontainers could not be installed from PyPI: the Testcontainers snippet is not run"
fi
phase "passed"
