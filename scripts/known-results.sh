#!/usr/bin/env bash
# The known-results matrix: install four real receipt validators, run the corpus against each, and write the
# Markdown matrix into Documentation/runner.md between <!-- known-results:begin --> and <!-- known-results:end -->.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/known-results.sh [--forge PATH] [--only NAME]... [--doc FILE] [--install-only] DIR

Runs the receipt-forge corpus (profile apple-compatible) against real third-party receipt validators,
each through its exit-code adapter in examples/harnesses/ (the Python ones forked per vector by forking.py), and puts the matrix in Documentation/runner.md (Known results).

  DIR              where the validators live (one Python venv per validator, pinned versions; created on the
                   first run, reused after) and where the results go: DIR/results/NAME.json, DIR/matrix.md.
                   Inside the repository, use .oracles/ (gitignored).
  --forge PATH     the forge binary. Default: $FORGE, else $(swift build --show-bin-path)/forge if it exists,
                   else forge on PATH.
  --only NAME      run only this validator (repeatable, or comma-separated). The matrix is still made from
                   every DIR/results/*.json, so earlier runs of the others stay in it.
  --install-only   only create or update the venvs (what .ci/run does, so the tests can run the adapters);
                   no forge needed, nothing run.
  --doc FILE       the file whose markers are replaced (default: Documentation/runner.md). Without
                   the markers the matrix is printed on stdout instead, and the file is left alone.
  -h, --help       this text.

Validators (NAME: what it wraps; what is installed):
  openssl  openssl cms -verify (examples/openssl-harness.sh)  the openssl CLI on PATH, nothing installed
  aprv     apple-purchase-receipt-verifier 0.12.0             pip: apple-purchase-receipt-verifier==0.12.0
  iap      iap_local_receipt 0.2.0                            pip: iap_local_receipt==0.2.0 pyOpenSSL==22.0.0
                                                                   cryptography==37.0.4 (old pins: own venv)
  asl      app-store-server-library 3.1.2 ReceiptUtility      pip: app-store-server-library==3.1.2 httpx==0.28.1 (parse only;
                                                                   httpx for the async API client tests)
  asl-jws  app-store-server-library 3.1.2 SignedDataVerifier  asl's venv (StoreKit 2 JWS vectors only; online
                                                                   checks on for `online` vectors, against the
                                                                   OCSP responder forge run starts)
  asl-tr   app-store-server-library 3.1.2 ReceiptUtility      asl's venv (iOS 6 transaction receipts only:
           .extract_transaction_id_from_transaction_receipt        extract-only, it verifies nothing)
  jwtkit   vapor/jwt-kit 5.8.0 X5CVerifier                   swift build (debug) of examples/harnesses/jwtkit (JWS only)

Installed, not run against the corpus (the tools of ServerAPISpecTests, the OpenAPI document of forge serve's
App Store Server API):
  openapi  openapi-spec-validator 0.9.0, schemathesis 4.32.5  pip: openapi-spec-validator==0.9.0 schemathesis==4.32.5

Each run is `forge run --target exit:... --label NAME --profile apple-compatible --artifacts ... --features ... --granularity ...
--results DIR/results/NAME.json --quiet`; the Python adapters' target is `stdio:PYTHON examples/harnesses/forking.py
... ADAPTER`, which runs the exit-code adapter in a forked child per vector (the same verdicts, without the library's
imports per vector), its features and granularity in its hello. forge run exiting 1 (the validator fails vectors) is the expected
result; exit 2 (canaries failed, infrastructure) is reported, the other validators still run, and this script
then exits 2. The matrix is `forge run matrix DIR/results/*.json`.

Exit: 0 done; 1 a validator could not be installed or forge failed otherwise; 2 a run failed its canaries or
infrastructure; 64 usage.

Examples:
  scripts/known-results.sh .oracles
  scripts/known-results.sh --forge .build/release/forge --only aprv,iap .oracles
  PYTHON=python3.11 scripts/known-results.sh --doc /tmp/runner.md /tmp/oracles
EOF
}

say() { printf 'known-results: %s\n' "$*" >&2; }
die() { say "$1"; exit "${2:-1}"; }

root=$(cd "$(dirname "$0")/.." && pwd)
forge=${FORGE:-}
doc=$root/Documentation/runner.md
only=()
install_only=0
dir=
while [ $# -gt 0 ]; do
    case $1 in
        -h|--help) usage; exit 0 ;;
        --forge) [ $# -ge 2 ] || die "--forge needs a path" 64; forge=$2; shift 2 ;;
        --forge=*) forge=${1#*=}; shift ;;
        --install-only) install_only=1; shift ;;
        --only) [ $# -ge 2 ] || die "--only needs a name" 64; IFS=, read -r -a names <<<"$2"; only+=("${names[@]}"); shift 2 ;;
        --only=*) IFS=, read -r -a names <<<"${1#*=}"; only+=("${names[@]}"); shift ;;
        --doc) [ $# -ge 2 ] || die "--doc needs a file" 64; doc=$2; shift 2 ;;
        --doc=*) doc=${1#*=}; shift ;;
        -*) usage >&2; die "unknown option $1" 64 ;;
        *) [ -z "$dir" ] || die "one DIR only (got '$dir' and '$1')" 64; dir=$1; shift ;;
    esac
done
[ -n "$dir" ] || { usage >&2; die "give DIR, where the validators are installed (e.g. .oracles)" 64; }

all=(openssl aprv iap asl asl-jws asl-tr jwtkit)
installed=(aprv iap asl jwtkit openapi)  # --install-only's venvs; openapi is no validator, never run
for name in "${only[@]}"; do
    [[ " ${all[*]} ${installed[*]} " == *" $name "* ]] || die "--only $name: not one of ${all[*]} openapi" 64
done
selected() { [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }

if [ "$install_only" = 0 ] && [ -z "$forge" ]; then
    bin=$(cd "$root" && swift build --show-bin-path 2>/dev/null || true)
    if [ -n "$bin" ] && [ -x "$bin/forge" ]; then forge=$bin/forge; else forge=$(command -v forge || true); fi
    [ -n "$forge" ] || die "no forge binary: build it (swift build --product forge) or give --forge PATH"
fi
if [ "$install_only" = 0 ]; then
    [ -x "$forge" ] || forge=$(command -v "$forge" || true)
    [ -n "$forge" ] && [ -x "$forge" ] || die "--forge: not an executable"
fi

mkdir -p "$dir/results"
dir=$(cd "$dir" && pwd)
case $dir in *[\"\'\\]*) die "DIR must not contain quotes or backslashes (it goes into an exit: command line)" 64 ;; esac
python=${PYTHON:-python3}

# NAME -> pip pins (empty: nothing to install), features, granularity.
pins() {
    case $1 in
        aprv) echo "apple-purchase-receipt-verifier==0.12.0" ;;
        iap) echo "iap_local_receipt==0.2.0 pyOpenSSL==22.0.0 cryptography==37.0.4" ;;
        asl) echo "app-store-server-library==3.1.2 httpx==0.28.1" ;;  # httpx: the library's async client
        openapi) echo "openapi-spec-validator==0.9.0 schemathesis==4.32.5" ;;  # Documentation/server-api.openapi.yaml
    esac
}
features() {
    case $1 in
        openssl) echo "xcode,sha1,robustness,large" ;;
        aprv) echo "sha1,robustness,large,transport-decoding" ;;
        iap) echo "device-hash,sha1,robustness,large" ;;
        asl) echo "xcode,sha1,robustness,large,transport-decoding" ;;
        asl-jws) echo "xcode,large,online" ;;  # online: SignedDataVerifier with online checks on, OCSP to forge's responder
        asl-tr) echo "" ;;  # no transaction-receipt vector needs a feature
        jwtkit) echo "xcode,large" ;;  # Xcode JWS and JWS over 256 KiB: both verifiers read them; no OCSP
    esac
}
granularity() { case $1 in aprv|iap) echo coarse ;; *) echo none ;; esac; }
# Which artefacts: StoreKit 2 JWS for a JWS verifier, iOS 6 transaction receipts for their extractor, receipts for the others.
artifacts() { case $1 in asl-jws|jwtkit) echo jws ;; asl-tr) echo transaction-receipt ;; *) echo receipt ;; esac; }
# The venv a row runs in: the JWS and transaction-receipt rows of Apple's library run in asl's.
venv_of() { case $1 in asl-jws|asl-tr) echo asl ;; *) echo "$1" ;; esac; }
# The Python adapters are exit-code harnesses run through examples/harnesses/forking.py: one Python imports the
# library once and forks a child per vector, which sees what an exit: process would (the same verdicts, a fifth of
# the CPU). Their features and granularity go in its hello, so the run takes them from there.
python_adapter() { case $1 in aprv|iap|asl|asl-jws|asl-tr) return 0 ;; *) return 1 ;; esac; }
target() {
    local adapter=examples/harnesses/${1/-/_}.py venv=$dir/$(venv_of "$1")/bin/python
    case $1 in
        openssl) echo "exit:examples/openssl-harness.sh" ;;
        jwtkit) echo "exit:\"$dir/jwtkit/debug/jwtkit-harness\"" ;;
        *) echo "stdio:\"$venv\" examples/harnesses/forking.py --vectors \"$root/Vectors\" --artifacts $(artifacts "$1") --features '$(features "$1")' --granularity $(granularity "$1") $adapter" ;;
    esac
}

install() {  # a venv per validator; skipped when every pin is already installed at its version
    local name=$1 venv=$dir/$1 log=$dir/$1.install.log
    if [ "$name" = jwtkit ]; then  # a Swift package from the package mirror, built into DIR/jwtkit
        local binary=$venv/debug/jwtkit-harness
        if [ -x "$binary" ] && [ -z "$(find examples/harnesses/jwtkit -newer "$binary" -type f -not -name Package.resolved)" ]; then
            say "jwtkit: already built in $venv"
            return 0
        fi
        # Debug: the same verdicts as a release build (the known-results test compares them), at two thirds of the CPU.
        say "jwtkit: swift build (examples/harnesses/jwtkit, vapor/jwt-kit 5.8.0) into $venv (log: $log)"
        swift build --package-path examples/harnesses/jwtkit --scratch-path "$venv" >"$log" 2>&1 || { tail -5 "$log" >&2; return 1; }
        return 0
    fi
    read -r -a wanted <<<"$(pins "$name")"
    if [ -x "$venv/bin/python" ] && "$venv/bin/python" - "${wanted[@]}" <<'PY' 2>/dev/null; then
import importlib.metadata as metadata, sys
sys.exit(any(metadata.version(pin.split("==")[0]) != pin.split("==")[1] for pin in sys.argv[1:]))
PY
        say "$name: already installed in $venv"
        return 0
    fi
    say "$name: installing ${wanted[*]} into $venv (log: $log)"
    { "$python" -m venv "$venv" && "$venv/bin/pip" install --disable-pip-version-check "${wanted[@]}"; } >"$log" 2>&1 \
        || { tail -5 "$log" >&2; return 1; }
    if [ "$name" = aprv ]; then  # the first Verifier compiles aprv.wasm (seconds); do it once, into its cache
        say "aprv: compiling aprv.wasm into its cache"
        "$venv/bin/python" -c 'from apple_purchase_receipt_verifier import Config, Verifier; Verifier(Config())' >>"$log" 2>&1 || true
    fi
}

cd "$root"  # the adapters' paths in the targets are relative to the repository
if [ "$install_only" = 1 ]; then
    # jwtkit's build (CPU) runs beside the venvs' downloads (network), each failure still named.
    jwtkit_build=
    if selected jwtkit; then install jwtkit & jwtkit_build=$!; fi
    for name in "${installed[@]}"; do [ "$name" != jwtkit ] && selected "$name" && { install "$name" || die "$name: installation failed"; }; done
    [ -z "$jwtkit_build" ] || wait "$jwtkit_build" || die "jwtkit: installation failed"
    exit 0
fi
failed=()
for name in "${all[@]}"; do
    selected "$name" || continue
    if [ "$name" = openssl ]; then
        command -v openssl >/dev/null || { say "openssl: not on PATH, skipped"; failed+=("openssl (not installed)"); continue; }
    else
        install "$(venv_of "$name")" || die "$name: installation failed"  # asl-jws and asl-tr run in asl's venv
    fi
    results=$dir/results/$name.json
    feature_arguments=(--granularity "$(granularity "$name")")
    [ -z "$(features "$name")" ] || feature_arguments+=(--features "$(features "$name")")
    ! python_adapter "$name" || feature_arguments=()  # said by forking.py's hello
    say "$name: forge run --target $(target "$name") --artifacts $(artifacts "$name") ${feature_arguments[*]}"
    status=0
    "$forge" run --vectors "$root/Vectors" --target "$(target "$name")" --label "$name" --profile apple-compatible \
        --artifacts "$(artifacts "$name")" "${feature_arguments[@]}" --timeout 20 --max-errors 5 \
        --results "$results" --quiet >"$dir/$name.log" 2>&1 || status=$?
    case $status in
        0) say "$name: conformant (exit 0); results in $results" ;;
        1) say "$name: $(tail -1 "$dir/$name.log")" ;;
        2) say "$name: INFRASTRUCTURE FAILURE (exit 2), see $dir/$name.log:"; tail -5 "$dir/$name.log" >&2; failed+=("$name (exit 2)") ;;
        130|143) die "interrupted" "$status" ;;
        *) tail -5 "$dir/$name.log" >&2; die "$name: forge run failed with exit $status" ;;
    esac
done

shopt -s nullglob
files=()  # in the order above, then any other results left in the folder
for name in "${all[@]}"; do [ -f "$dir/results/$name.json" ] && files+=("$dir/results/$name.json"); done
for file in "$dir"/results/*.json; do [[ " ${all[*]} " == *" $(basename "$file" .json) "* ]] || files+=("$file"); done
[ ${#files[@]} -gt 0 ] || die "no results in $dir/results"
matrix=$dir/matrix.md
"$forge" run matrix "${files[@]}" >"$matrix" || die "forge run matrix failed"
say "matrix: $matrix"

begin='<!-- known-results:begin -->' end='<!-- known-results:end -->'
if [ -f "$doc" ] && [ "$(grep -cxF "$begin" "$doc")" = 1 ] && [ "$(grep -cxF "$end" "$doc")" = 1 ] \
    && [ "$(grep -nxF "$begin" "$doc" | cut -d: -f1)" -lt "$(grep -nxF "$end" "$doc" | cut -d: -f1)" ]; then
    tmp=$(mktemp "$doc.XXXXXX")
    trap 'rm -f "$tmp"' EXIT
    awk -v begin="$begin" -v end="$end" -v matrix="$matrix" '
        $0 == begin { print; while ((getline line < matrix) > 0) print line; skipping = 1; next }
        $0 == end { skipping = 0 }
        !skipping' "$doc" >"$tmp"
    chmod --reference="$doc" "$tmp" 2>/dev/null || true
    mv -f "$tmp" "$doc"
    trap - EXIT
    say "updated $doc between the known-results markers"
else
    say "$doc has no single pair of lines '$begin' / '$end': not changed; the matrix:"
    cat "$matrix"
fi
if [ ${#failed[@]} -gt 0 ]; then say "failed: ${failed[*]}"; exit 2; fi
