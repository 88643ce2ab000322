#!/usr/bin/env bash
# The Python wheel of a release: receipt_forge-VERSION-py3-none-manylinux_2_XX_ARCH.whl, holding the release's
# binaries (forge, forge-http) and the pure-Python package python/receipt_forge (Server, the pytest plugin), written
# into DIST beside the tarball it is made from. No compiler and no network at install time: `pip install FILE.whl`.
# The platform tag's glibc floor is read from the binaries (the highest GLIBC_x.y symbol version they need), so the
# tag says what the binaries need, not what this machine has.
# DIST is what `scripts/release.sh --out DIST` writes (receipt-forge-VERSION-linux-ARCH.tar.xz). Prints the wheel's path.
# Usage: scripts/wheel.sh DIST
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dist=${1:?usage: scripts/wheel.sh DIST (the folder scripts/release.sh --out wrote)}
case "$dist" in -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
for tool in tar objdump python3; do
  command -v "$tool" >/dev/null || { echo "wheel.sh: $tool is needed and not on PATH" >&2; exit 69; }
done
shopt -s nullglob
tarballs=("$dist"/receipt-forge-*-linux-*.tar.xz)
[ ${#tarballs[@]} -eq 1 ] || { echo "wheel.sh: $dist must hold one receipt-forge-VERSION-linux-ARCH.tar.xz (scripts/release.sh --out), found ${#tarballs[@]}" >&2; exit 66; }
tarball=${tarballs[0]}
name=$(basename "$tarball" .tar.xz)
version=${name#receipt-forge-}; version=${version%-linux-*}
arch=${name##*-linux-}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xJf "$tarball" -C "$work" "$name/bin/forge" "$name/bin/forge-http"
bin=$work/$name/bin
# The glibc floor: the newest symbol version either binary asks of glibc.
floor=$(objdump -T "$bin/forge" "$bin/forge-http" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2,2n -u | tail -1)
[ -n "$floor" ] || { echo "wheel.sh: no GLIBC_ symbol version in the binaries: are they Linux glibc executables?" >&2; exit 65; }
minor=${floor#GLIBC_2.}
tag=py3-none-manylinux_2_${minor}_${arch}
wheel=$dist/receipt_forge-$version-$tag.whl
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 315532800)}

python3 - "$root/python/receipt_forge" "$bin" "$version" "$tag" "$wheel" "$epoch" <<'PYTHON'
"""Writes the wheel (PEP 427) with the standard library only: sorted entries, one timestamp, RECORD last."""
import base64, hashlib, os, sys, time, zipfile

package, binaries, version, tag, target, epoch = sys.argv[1:7]
stamp = time.gmtime(max(int(epoch), 315532800))[:6]
info = f"receipt_forge-{version}.dist-info"
entries = []  # (name, bytes, executable)
for folder, folders, files in os.walk(package):
    folders[:] = sorted(f for f in folders if f != "__pycache__")
    for file in sorted(files):
        if file.endswith(".py"):
            path = os.path.join(folder, file)
            data = open(path, "rb").read()
            name = "receipt_forge/" + os.path.relpath(path, package).replace(os.sep, "/")
            if name == "receipt_forge/__init__.py":
                data = data.replace(b'__version__ = "0.0.0"', f'__version__ = "{version}"'.encode())
            entries.append((name, data, False))
for binary in ("forge", "forge-http"):
    entries.append((f"receipt_forge/bin/{binary}", open(os.path.join(binaries, binary), "rb").read(), True))
metadata = f"""Metadata-Version: 2.1
Name: receipt-forge
Version: {version}
Summary: Apple in-app purchase receipts, StoreKit 2 JWS and a stand-in for Apple's servers (forge serve), with a pytest plugin
Requires-Python: >=3.8
Provides-Extra: apple
Requires-Dist: app-store-server-library; extra == "apple"

receipt-forge's `forge` and `forge-http` for Linux, and the `receipt_forge` package: `receipt_forge.Server` runs
`forge serve` in a test, and the pytest plugin gives the fixtures forge_server, forge_server_session, forge_jws and
forge_receipt. Documentation/python.md of the release tells how. TEST ONLY: everything is signed by TEST PKIs.
"""
entries += [
    (f"{info}/METADATA", metadata.encode(), False),
    (f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: receipt-forge scripts/wheel.sh\nRoot-Is-Purelib: false\nTag: {tag}\n".encode(), False),
    (f"{info}/entry_points.txt", b"[pytest11]\nreceipt_forge = receipt_forge.pytest_plugin\n\n[console_scripts]\nforge = receipt_forge._run:main\n", False),
]
record = []
for name, data, _ in entries:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append(f"{name},sha256={digest},{len(data)}")
record.append(f"{info}/RECORD,,")
entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode(), False))
partial = target + ".partial"
with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
    for name, data, executable in entries:
        entry = zipfile.ZipInfo(name, stamp)
        entry.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
        entry.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(entry, data, compresslevel=9)
os.replace(partial, target)
PYTHON
echo "wheel.sh: $(basename "$wheel"): the binaries need $floor at least; $(du -k "$wheel" | cut -f1) KiB" >&2
echo "$wheel"
