#!/usr/bin/env bash
# What makes the shipped binaries big (issue 41): for `forge` and `forge-http` of a release build (static Swift
# runtime, as scripts/release.sh builds them), prints
#   - the size unstripped and stripped, `ldd` of the stripped binary and the newest glibc symbol it needs;
#   - what of Foundation is linked: ICU's data (icudt*_dat) and the Swift symbols defined per Foundation module;
#   - every object file linked (the project's and its dependencies') that references Foundation proper
#     (`Foundation`, `FoundationInternationalization`: what brings ICU), by module, with the symbols it uses;
#   - per API that is not FoundationEssentials, its uses in Sources/ per target (grep).
# A program with no Foundation is ~6 MB stripped, one on FoundationEssentials ~13 MB, and any one reference to
# Foundation proper links ICU (~43 MB): the object list says which files keep a binary on the last.
# Usage: scripts/size-report.sh [--scratch-path DIR (default .build/static)] [--no-build] [--symbols N (default 3)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$root/.build/static
build=yes
symbols=3
while [ $# -gt 0 ]; do
  case "$1" in
    --scratch-path) scratch=${2:?--scratch-path needs a directory}; shift 2 ;;
    --no-build) build=no; shift ;;
    --symbols) symbols=${2:?--symbols needs a number}; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "size-report.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
  esac
done
for tool in swift nm strip ldd objdump; do
  command -v "$tool" >/dev/null || { echo "size-report.sh: $tool is needed and not on PATH" >&2; exit 69; }
done
# The same build as release.sh's, so that the figures are the release's (and its scratch path is shared).
. "$root/scripts/release-build.sh"
swiftbuild=("${release_build[@]}")
if [ "$build" = yes ]; then
  echo "building forge-http and forge (release, static Swift runtime) in $scratch" >&2
  "${swiftbuild[@]}" --product forge-http >&2
  "${swiftbuild[@]}" --product forge >&2
fi
bin=$("${swiftbuild[@]}" --show-bin-path)
demangle() { if command -v swift-demangle >/dev/null; then swift-demangle --simplified; else cat; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Modules in mangled names: <length><name>, after $s or inside (an extension's members: $sSS10FoundationE…).
foundation='[^0-9]10Foundation'
international='[^0-9]30FoundationInternationalization'
essentials='[^0-9]20FoundationEssentials'
for product in forge forge-http; do
  [ -x "$bin/$product" ] || { echo "size-report.sh: $bin/$product is not built" >&2; exit 66; }
  cp "$bin/$product" "$work/$product"
  strip "$work/$product"
  echo "== $product"
  printf 'size: %s bytes unstripped, %s bytes stripped (%s MB)\n' "$(stat -c %s "$bin/$product")" \
    "$(stat -c %s "$work/$product")" "$(awk -v b="$(stat -c %s "$work/$product")" 'BEGIN { printf "%.1f", b / 1000000 }')"
  echo "ldd:"
  ldd "$work/$product" | sed 's/ (0x[0-9a-f]*)//; s/^\s*/  /'
  echo "newest glibc symbol: $(objdump -T "$work/$product" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
  nm -S "$bin/$product" >"$work/$product.nm"
  icu=$(awk '$4 ~ /^icudt[0-9]+_dat$/ { print $4, $2; exit }' "$work/$product.nm")
  if [ -n "$icu" ]; then echo "ICU data: ${icu% *} $((16#${icu#* })) bytes"; else echo "ICU data: none"; fi
  printf 'Swift symbols defined: Foundation %s, FoundationInternationalization %s, FoundationEssentials %s\n' \
    "$(grep -cE " [A-TV-Za-tv-z] \\\$s.*$foundation" "$work/$product.nm" || true)" \
    "$(grep -cE " [A-TV-Za-tv-z] \\\$s.*$international" "$work/$product.nm" || true)" \
    "$(grep -cE " [A-TV-Za-tv-z] \\\$s.*$essentials" "$work/$product.nm" || true)"
  list=$scratch/release/$product.product/Objects.LinkFileList
  [ -f "$list" ] || list=$(find "$scratch" -path "*/release/$product.product/Objects.LinkFileList" | head -1)
  echo "object files that reference Foundation proper (module/file: references; first $symbols):"
  found=0
  while read -r object; do
    object=${object//\"/}
    [ -f "$object" ] || continue
    nm -u "$object" 2>/dev/null | awk '{ print $NF }' | grep -E "^\\\$s.*($foundation|$international)" >"$work/refs" || continue
    found=$((found + 1))
    printf '  %s/%s: %s\n' "$(basename "$(dirname "$object")" .build)" "$(basename "$object" .o)" "$(wc -l <"$work/refs")"
    head -"$symbols" "$work/refs" | demangle | cut -c1-160 | sed 's/^/      /'
  done <"$list"
  echo "  ($found files)"
done

# Foundation-proper API (not in Swift 6.3's FoundationEssentials: checked by type-checking each against
# `import FoundationEssentials`), and the uses of each per target. Essentials has Data, Date, URL, JSONEncoder/
# JSONDecoder, ProcessInfo, FileManager, Locale/TimeZone/Calendar, components(separatedBy:), contains(_:),
# data(using:), Date.ISO8601Format(); not range(of:), replacingOccurrences, trimmingCharacters, CharacterSet.
echo "== Foundation-proper API in Sources/ (uses per target)"
for api in 'String(format:' 'FileHandle' 'Process()' 'Pipe()' 'JSONSerialization' 'ISO8601DateFormatter' 'DateFormatter' \
  'NumberFormatter' '.range(of:' 'replacingOccurrences(of:' 'trimmingCharacters(in:' 'CharacterSet' \
  'removingPercentEncoding' 'addingPercentEncoding' 'NSRegularExpression' 'Scanner(' 'NSString' 'Thread.' 'Bundle.' \
  'RunLoop' 'NSLock' '.formatted('; do
  # A name, not part of one (jwsJSONSerialization, DetachedThread.start); comment lines left out.
  pattern=$(printf '%s' "$api" | sed 's/[][\.*^$(){}+?|]/\\&/g')
  case "$api" in [A-Za-z]*) pattern="(^|[^A-Za-z0-9_])$pattern" ;; esac
  uses=$({ grep -rE --include='*.swift' -- "$pattern" "$root/Sources" || true; } | grep -vE '^[^:]*:[[:space:]]*//' |
    sed "s|^$root/Sources/||" | cut -d/ -f1 | sort | uniq -c | awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }') || true
  [ -n "$uses" ] && printf '  %-26s %s\n' "$api" "$uses"
done
echo "== targets that import Foundation unconditionally (files per target)"
{ grep -rlE --include='*.swift' '^(public |package |internal |@preconcurrency )*import Foundation$' "$root/Sources" || true; } |
  sed "s|^$root/Sources/||" | cut -d/ -f1 | sort | uniq -c | awk '{ printf "  %s %s\n", $2, $1 }'
