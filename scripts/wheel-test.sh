#!/usr/bin/env bash
# The wheel tested as a user meets it: scripts/wheel.sh builds it from DIST (what scripts/release.sh --out wrote);
# a fresh venv gets pytest and app-store-server-library from PyPI, then the wheel from its file alone (--no-index:
# no network, no compiler); examples/python-pytest, the package's own tests (python/tests) and the Python blocks of
# Documentation/python.md run from copies outside the checkout, so `import receipt_forge` and its forge are the
# installed wheel's. Prints the wheel's size and
# the seconds from `pip install` of the wheel to a passing example test.
# Usage: scripts/wheel-test.sh DIST
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dist=${1:?usage: scripts/wheel-test.sh DIST}
wheel=$(bash "$root/scripts/wheel.sh" "$dist")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset RECEIPT_FORGE_BINARY PYTHONPATH

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check pytest app-store-server-library httpx
cp -R "$root/examples/python-pytest" "$work/example"
cp -R "$root/python/tests" "$work/package-tests"

started=$(date +%s.%N)
"$work/venv/bin/pip" install -q --disable-pip-version-check --no-index "$wheel"
(cd "$work/example" && "$work/venv/bin/python" -m pytest -q -p no:cacheprovider -k a_purchase_grants test_subscriptions.py)
ready=$(date +%s.%N)

installed=$("$work/venv/bin/python" -c 'import receipt_forge; print(receipt_forge.binary())')
case "$installed" in "$work/venv/"*) ;; *) echo "wheel-test.sh: receipt_forge runs $installed, not the wheel's forge" >&2; exit 1 ;; esac
(cd "$work/example" && "$work/venv/bin/python" -m pytest -q -p no:cacheprovider)
(cd "$work/package-tests" && "$work/venv/bin/python" -m pytest -q -p no:cacheprovider)
# Every Python block of the page a Python team copies from, as the test folder it describes.
(cd "$work" && "$work/venv/bin/python" "$root/scripts/python-doc-test.py" "$root/Documentation/python.md")
"$work/venv/bin/forge" --version >/dev/null

size=$(stat -c %s "$wheel")
awk -v size="$size" -v started="$started" -v ready="$ready" -v name="$(basename "$wheel")" \
  'BEGIN { printf "wheel-test.sh: %s: %.1f MB; pip install of the file to a passing example test: %.1f s\n", name, size / 1e6, ready - started }'
