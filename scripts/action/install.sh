#!/usr/bin/env bash
# The action's install step: puts `forge` (and `forge-http`) on the job's PATH through $GITHUB_PATH.
#   INPUT_FORGE_VERSION=source   build this checkout ($GITHUB_ACTION_PATH) in release with SwiftPM (the cache step
#                                keeps .build between jobs)
#   INPUT_FORGE_VERSION=X.Y.Z    download receipt-forge-X.Y.Z-linux-x86_64.tar.xz and its SHA256SUMS from the
#                                release of $GITHUB_ACTION_REPOSITORY, check the sum, unpack into $RUNNER_TEMP;
#                                the run step then judges with the release's own corpus ($GITHUB_ENV)
set -euo pipefail
root=${GITHUB_ACTION_PATH:?where the action is checked out}
version=${INPUT_FORGE_VERSION:-source}
: "${GITHUB_PATH:?the file GitHub reads PATH additions from}"
if [ "$version" = source ]; then
  command -v swift >/dev/null || { echo "::error::forge-version: source needs a Swift toolchain (container: swift:6.2), or name a release"; exit 69; }
  swift build -c release --package-path "$root" --product forge
  swift build -c release --package-path "$root" --product forge-http
  echo "$(swift build -c release --package-path "$root" --show-bin-path)" >>"$GITHUB_PATH"
  exit 0
fi
case "$version" in
  [0-9]*.[0-9]*.[0-9]*) ;;
  *) echo "::error::forge-version must be 'source' or a release like 1.0.0, not '$version'"; exit 64 ;;
esac
repository=${GITHUB_ACTION_REPOSITORY:-${GITHUB_REPOSITORY:?}}
name="receipt-forge-$version-linux-x86_64.tar.xz"
base="${GITHUB_SERVER_URL:-https://github.com}/$repository/releases/download/v$version"
dir="${RUNNER_TEMP:?}/receipt-forge-$version"
mkdir -p "$dir"
curl -fsSL -o "$dir/$name" "$base/$name"
curl -fsSL -o "$dir/SHA256SUMS" "$base/SHA256SUMS"
(cd "$dir" && grep " $name\$" SHA256SUMS | sha256sum -c -)
tar -xJf "$dir/$name" -C "$dir"
prefix="$dir/receipt-forge-$version-linux-x86_64"
echo "$prefix/bin" >>"$GITHUB_PATH"
[ -n "${GITHUB_ENV:-}" ] && echo "RECEIPT_FORGE_VECTORS=$prefix/Vectors" >>"$GITHUB_ENV"
exit 0
