#!/usr/bin/env bash
# Release binaries that need no Swift toolchain: `forge` and `forge-http` built in release with the Swift
# runtime (and Foundation) linked statically, stripped, and packed with the corpus, the TEST roots, the examples
# and the docs. Writes into --out (default dist/):
#   receipt-forge-VERSION-linux-ARCH.tar.xz   receipt-forge-VERSION/{bin/forge, bin/forge-http, Vectors/, roots/,
#                                             examples/, Documentation/, README.md}
#   forge.artifactbundle.zip                  forge as a SwiftPM artifact bundle (binaryTarget for plugins)
#   SHA256SUMS                                sha256sum -c format; the zip's sum is its SwiftPM checksum
# OpenSSL 3 and SQLite 3 are linked statically too (scripts/release-build.sh), so the binaries load only glibc's
# libraries (libc, libm, the loader) and libstdc++/libgcc_s, which every glibc Linux has: glibc 2.35 or newer
# (Ubuntu 22.04+, Debian 12+); scripts/size-report.sh prints the newest glibc symbol they need.
# The tarball is xz (-9, one thread, so the same bytes on any machine): its 64 MB window sees that forge-http holds
# most of forge, and it is half the size of a gzip one (12.3 MB against 24.6 MB; scripts/bench-release.sh).
# VERSION is what the built `forge --version` says. Packing is all or nothing: files appear in --out only once
# complete, and only the three above are replaced.
# Usage: scripts/release.sh [--out DIR] [--scratch-path DIR (default .build/static)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/dist
scratch=$root/.build/static
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --scratch-path) scratch=${2:?--scratch-path needs a directory}; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "release.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
  esac
done
for tool in swift strip tar xz sha256sum python3; do
  command -v "$tool" >/dev/null || { echo "release.sh: $tool is needed and not on PATH" >&2; exit 69; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

. "$root/scripts/release-build.sh"
build=("${release_build[@]}")
echo "building forge-http and forge (release, static Swift runtime) in $scratch" >&2
"${build[@]}" --product forge-http >&2
"${build[@]}" --product forge >&2
bin=$("${build[@]}" --show-bin-path)

version=$("$bin/forge" --version)
case "$version" in [0-9]*.[0-9]*.[0-9]*) ;; *) echo "release.sh: forge --version said '$version', not a version" >&2; exit 70 ;; esac
arch=$(uname -m)
name=receipt-forge-$version-linux-$arch

staging=$(mktemp -d "$out/.staging.XXXXXX")
trap 'rm -rf "$staging"' EXIT
package=$staging/$name
mkdir -p "$package/bin"
for product in forge forge-http; do
  cp "$bin/$product" "$package/bin/$product"
  strip "$package/bin/$product"
done
# The tracked files only: a checkout's build products and caches (examples/harnesses/jwtkit/.build) stay out.
copy_tracked() {
  if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$root" && git ls-files -z -- "$@" | xargs -0 -I{} cp --parents {} "$package/")
  else
    (cd "$root" && cp -R "$@" "$package/")
  fi
}
copy_tracked Vectors examples Documentation README.md
[ -f "$root/LICENSE" ] && cp "$root/LICENSE" "$package/"
"$package/bin/forge" ca export --out "$package/roots" >/dev/null

# Reproducible packing: sorted names, one timestamp (the commit's, or SOURCE_DATE_EPOCH), no owners.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}
tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -C "$staging" -cf - "$name" | xz -9 -T1 >"$staging/$name.tar.xz"

# SwiftPM's artifact bundle (SE-0305): info.json naming the executable per target triple.
bundle=$staging/bundle/forge.artifactbundle
mkdir -p "$bundle/forge-$version-linux-$arch/bin"
cp "$package/bin/forge" "$bundle/forge-$version-linux-$arch/bin/forge"
cat >"$bundle/info.json" <<EOF
{
  "schemaVersion": "1.0",
  "artifacts": {
    "forge": {
      "version": "$version",
      "type": "executable",
      "variants": [
        {"path": "forge-$version-linux-$arch/bin/forge", "supportedTriples": ["$arch-unknown-linux-gnu"]}
      ]
    }
  }
}
EOF
python3 - "$staging/bundle" "$staging/forge.artifactbundle.zip" "$epoch" <<'EOF'
import os, sys, time, zipfile
base, target, epoch = sys.argv[1], sys.argv[2], max(int(sys.argv[3]), 315532800)  # zip starts at 1980
stamp = time.gmtime(epoch)[:6]
with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
    for folder, folders, files in os.walk(base):
        folders.sort()
        for entry in sorted(files):
            path = os.path.join(folder, entry)
            info = zipfile.ZipInfo(os.path.relpath(path, base), stamp)
            info.external_attr = (os.stat(path).st_mode & 0o777 | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as source:
                archive.writestr(info, source.read())
EOF

(cd "$staging" && sha256sum "$name.tar.xz" forge.artifactbundle.zip >SHA256SUMS)
for file in "$name.tar.xz" forge.artifactbundle.zip SHA256SUMS; do mv -f "$staging/$file" "$out/$file"; done
echo "$out/$name.tar.xz"
echo "$out/forge.artifactbundle.zip"
echo "$out/SHA256SUMS"
