# Sourced by scripts/release.sh and scripts/size-report.sh: the one release build of the shipped binaries, so that
# the figures size-report.sh prints are the release's and both share one scratch path without rebuilding.
# Needs: root (the checkout) and scratch (the scratch path). Defines release_build, a `swift build` command line.
#
# The Swift runtime, OpenSSL 3 and SQLite 3 are linked statically (apt's libssl-dev and libsqlite3-dev have the
# archives), so a binary loads only glibc's libraries and libstdc++/libgcc_s. The system's pkg-config files say
# `-L/usr/lib/<triple> -lssl`, and in that folder `-lssl` finds libssl.so before any later -L is searched: SwiftPM is
# handed pkg-config files of our own whose -L names a folder holding only the archives (same headers; only the link
# line changes).
# The binaries export no symbols: Swift links executables with --export-dynamic, which put ~11,000 names in the
# dynamic symbol table (1 MB per binary, and the loader's time at every start) that nothing looks up.
release_libdir=$(pkg-config --variable=libdir libcrypto 2>/dev/null || echo "/usr/lib/$(uname -m)-linux-gnu")
release_static=$scratch/static-libraries
mkdir -p "$release_static/lib" "$release_static/pkgconfig"
for archive in libssl.a libcrypto.a libsqlite3.a; do
  if [ ! -f "$release_libdir/$archive" ]; then
    echo "$(basename "$0"): $release_libdir/$archive is missing (apt install libssl-dev libsqlite3-dev)" >&2
    exit 69
  fi
  ln -sfn "$release_libdir/$archive" "$release_static/lib/$archive"
done
release_includes=$(pkg-config --cflags-only-I openssl 2>/dev/null || true)
printf 'Name: openssl\nDescription: OpenSSL 3, static\nVersion: 3\nLibs: -L%s -lssl -lcrypto\nCflags: %s\n' \
  "$release_static/lib" "$release_includes" >"$release_static/pkgconfig/openssl.pc"
printf 'Name: sqlite3\nDescription: SQLite 3, static\nVersion: 3\nLibs: -L%s -lsqlite3 -lm\nCflags: %s\n' \
  "$release_static/lib" "$release_includes" >"$release_static/pkgconfig/sqlite3.pc"
printf '{ local: *; };\n' >"$release_static/exports.map"

# The same environment whoever calls (a shell, CI, swift test's child): SwiftPM rebuilds modules when the
# environment it sees changes, and the release build is minutes long.
release_build=(env -i PATH="$PATH" HOME="${HOME:-/root}" PKG_CONFIG_PATH="$release_static/pkgconfig"
  swift build -c release --static-swift-stdlib --package-path "$root" --scratch-path "$scratch"
  -Xlinker "--version-script=$release_static/exports.map")
