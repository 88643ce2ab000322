#!/usr/bin/env bash
# The container image receipt-forge:VERSION, FROM scratch, made from the release tarball (scripts/release.sh) in
# DIST (default dist/), with no registry: nothing is pulled. The image holds
#   /opt/receipt-forge/{bin/forge, bin/forge-http, Vectors/, examples/, roots/}   as the tarball lays them out
#   the shared libraries the binaries load (their ldd closure, the loader too) at the host's paths
#   /etc/passwd, /etc/group (root and forge, uid 10001), /etc/nsswitch.conf, the host's CA bundle
#   /config/scenarios (the example customers), /tmp (1777) and /work (the working directory, forge's)
# and runs as forge (10001:10001) with ENTRYPOINT ["forge"]; with no command (CMD ["serve"]) it serves
# verifyReceipt and the App Store Server API on 0.0.0.0:8080 with --no-auth, the stores of /config/scenarios and
# the clock at 2025-01-01T00:00:00Z, all given as FORGE_SERVE_* variables that `docker run -e` or a mount at /config
# replace (Documentation/container.md); `IMAGE make …` runs `forge make …`.
# Writes DIST/receipt-forge-VERSION-image-linux-ARCH.tar.gz (a docker-archive: `docker load -i FILE` or
# `podman load -i FILE`) and its line in DIST/SHA256SUMS, and prints the image's size and the archive's.
# The engine is podman, else docker; CONTAINER_ENGINE overrides it (words: CONTAINER_ENGINE="podman --runtime runc").
# Usage: scripts/image.sh [DIST]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
dist=${1:-$root/dist}
[ $# -le 1 ] || { echo "image.sh: one argument at most, the dist folder (see --help)" >&2; exit 64; }
if [ -n "${CONTAINER_ENGINE:-}" ]; then
  read -r -a engine <<<"$CONTAINER_ENGINE"
elif command -v podman >/dev/null; then engine=(podman)
elif command -v docker >/dev/null; then engine=(docker)
else echo "image.sh: neither podman nor docker is on PATH (or set CONTAINER_ENGINE)" >&2; exit 69
fi
for tool in tar gzip xz ldd sha256sum; do
  command -v "$tool" >/dev/null || { echo "image.sh: $tool is needed and not on PATH" >&2; exit 69; }
done

arch=$(uname -m)
shopt -s nullglob
tarballs=("$dist"/receipt-forge-*-linux-"$arch".tar.xz)
shopt -u nullglob
[ ${#tarballs[@]} -eq 1 ] || {
  echo "image.sh: want one receipt-forge-VERSION-linux-$arch.tar.xz in $dist (scripts/release.sh --out $dist), found ${#tarballs[@]}" >&2
  exit 66
}
tarball=${tarballs[0]}
name=$(basename "$tarball" .tar.xz)
version=${name#receipt-forge-}
version=${version%-linux-"$arch"}
case "$arch" in x86_64) platform=amd64 ;; aarch64) platform=arm64 ;; *) platform=$arch ;; esac
image=receipt-forge:$version
archive=$dist/receipt-forge-$version-image-linux-$platform.tar.gz

staging=$(mktemp -d "${TMPDIR:-/tmp}/receipt-forge-image.XXXXXX")
trap 'rm -rf "$staging"' EXIT
tar -xJf "$tarball" -C "$staging"
release=$staging/$name
rootfs=$staging/rootfs
prefix=$rootfs/opt/receipt-forge
mkdir -p "$prefix" "$rootfs/etc/ssl/certs" "$rootfs/tmp" "$staging/work/work"
chmod 1777 "$rootfs/tmp"
for part in bin Vectors examples roots; do mv "$release/$part" "$prefix/$part"; done
# The default server's stores: the example customers, replaced by whatever is mounted at /config or /config/scenarios.
mkdir -p "$rootfs/config/scenarios"
cp "$prefix"/examples/server-api/*.json "$rootfs/config/scenarios/"
[ -f "$release/LICENSE" ] && mv "$release/LICENSE" "$prefix/"
"$prefix/bin/forge" --version | grep -qx "$version" || { echo "image.sh: bin/forge --version is not $version" >&2; exit 70; }

# What the binaries load, at the paths the loader looks for them (the loader's own path is written in each binary).
libraries=$(for binary in "$prefix/bin/forge" "$prefix/bin/forge-http"; do
  { ldd "$binary" 2>/dev/null || true; } | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
done | sort -u)
for library in $libraries; do cp -L --parents "$library" "$rootfs/"; done
# The CA bundle an https:// --notify webhook is checked against, named by SSL_CERT_FILE: OpenSSL's own default
# (/usr/lib/ssl) is not in the image.
bundle=/etc/ssl/certs/ca-certificates.crt
if [ -f "$bundle" ]; then cp "$bundle" "$rootfs$bundle"; else bundle=; fi
printf 'root:x:0:0:root:/root:/sbin/nologin\nforge:x:10001:10001:receipt-forge:/work:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nforge:x:10001:\n' >"$rootfs/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$rootfs/etc/nsswitch.conf"

# Reproducible: every file and the image dated by the release's own timestamp (release.sh's, the commit's).
epoch=$(stat -c %Y "$prefix/bin/forge")
cat >"$staging/Containerfile" <<EOF
FROM scratch
COPY rootfs/ /
COPY --chown=10001:10001 work/ /
ENV PATH=/opt/receipt-forge/bin${bundle:+ SSL_CERT_FILE=$bundle}
USER 10001:10001
WORKDIR /work
EXPOSE 8080
LABEL org.opencontainers.image.title="receipt-forge" org.opencontainers.image.version="$version" \\
      org.opencontainers.image.description="Apple in-app purchase receipts, StoreKit 2 JWS and a stand-in for Apple's servers, signed by TEST PKIs: for tests only"
ENV FORGE_SERVE_LISTEN=0.0.0.0:8080 FORGE_SERVE_NO_AUTH=1 FORGE_SERVE_NOW=2025-01-01T00:00:00Z FORGE_SERVE_SCENARIO=/config/scenarios
ENTRYPOINT ["forge"]
CMD ["serve"]
EOF

echo "building $image from $tarball with ${engine[*]}" >&2
"${engine[@]}" build --quiet --timestamp "$epoch" --tag "$image" --file "$staging/Containerfile" "$staging" >/dev/null
"${engine[@]}" save --format docker-archive --output "$staging/image.tar" "$image" >/dev/null
gzip -n "$staging/image.tar"
mv -f "$staging/image.tar.gz" "$archive"
if [ -f "$dist/SHA256SUMS" ]; then
  grep -v " $(basename "$archive")\$" "$dist/SHA256SUMS" >"$staging/SHA256SUMS" || true
else
  : >"$staging/SHA256SUMS"
fi
(cd "$dist" && sha256sum "$(basename "$archive")") >>"$staging/SHA256SUMS"
mv -f "$staging/SHA256SUMS" "$dist/SHA256SUMS"

size=$("${engine[@]}" image inspect --format '{{.Size}}' "$image")
echo "$image: $((size / 1000000)) MB ($size bytes) uncompressed, $(basename "$archive") $(($(stat -c %s "$archive") / 1000000)) MB ($(stat -c %s "$archive") bytes)" >&2
echo "$archive"
