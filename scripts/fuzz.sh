#!/usr/bin/env bash
# Builds one libFuzzer target of FuzzTesting/ with -sanitize=fuzzer,address and runs it.
set -euo pipefail

usage() {
    cat <<'TXT'
Usage: scripts/fuzz.sh TARGET [SECONDS] [-- LIBFUZZER_OPTIONS...]
       scripts/fuzz.sh --list

Builds FuzzTesting's TARGET optimized, with libFuzzer and AddressSanitizer (FuzzTesting/.build, kept between runs)
and fuzzes it for SECONDS (default 60; 0: no time limit), inputs up to 16 KiB, seeded with `forge seeds` (every corpus vector, named by hash) and
its token dictionary; every target's dictionary also holds FuzzTesting/numbers.dict (numbers that are no instant
or no integer: 1e300, 1e400, Int64.max, 2^64, -0, NaN…). The working corpus is kept in FuzzTesting/.corpus/TARGET, so a second run goes on
where the first stopped. A crash, leak or timeout stops the run: its input is written to
FuzzTesting/FailCases/TARGET-<kind>-<sha1>, where `swift test` replays it (FailCaseTests), and the
script exits 1; so does a unit slower than 10 s (written as TARGET-slow-unit-<sha1>; the run goes on). The
summary (executions, exec/s, coverage, slowest unit, peak RSS) is printed at the end.

Targets: FuzzReceiptDecoder, FuzzReferenceValidator, FuzzInspect, FuzzRecipeReplay, FuzzDecoders, FuzzVerifyReceipt, FuzzJWSVerifier,
FuzzJWSRecipeReplay.

Examples:
  scripts/fuzz.sh FuzzReceiptDecoder 600
  scripts/fuzz.sh FuzzDecoders 120 -- -jobs=2 -workers=2
  scripts/fuzz.sh FuzzReferenceValidator 0 -- -runs=1000000     # until a million executions
TXT
}

[ $# -ge 1 ] || { usage >&2; exit 64; }
case $1 in -h|--help) usage; exit 0 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
targets=(FuzzReceiptDecoder FuzzReferenceValidator FuzzInspect FuzzRecipeReplay FuzzDecoders FuzzVerifyReceipt FuzzJWSVerifier FuzzJWSRecipeReplay)
if [ "$1" = --list ]; then printf '%s\n' "${targets[@]}"; exit 0; fi
target=$1; shift
[[ " ${targets[*]} " == *" $target "* ]] || { echo "fuzz.sh: unknown target $target (one of ${targets[*]})" >&2; exit 64; }
seconds=60
if [ $# -gt 0 ] && [ "$1" != -- ]; then seconds=$1; shift; fi
[ "${1:-}" = -- ] && shift
[[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number" >&2; exit 64; }

fuzz=$root/FuzzTesting
echo "fuzz.sh: building $target with -sanitize=fuzzer,address" >&2
(cd "$fuzz" && swift build -c release --product "$target" -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld) >&2
binary=$(cd "$fuzz" && swift build -c release --show-bin-path -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld)/$target

# A recipe dictionary: every key and string the recipes in DIR use (and every "jws.*" id SOURCE names), as tokens.
recipe_words() {  # DIR [SOURCE]
    python3 - "$@" <<'PY'
import json, pathlib, re, sys
words = set(re.findall(r'"(jws\.[a-z0-9-]+)"', pathlib.Path(sys.argv[2]).read_text())) if len(sys.argv) > 2 else set()
def walk(value):
    if isinstance(value, dict):
        for key, item in value.items(): words.add(key); walk(item)
    elif isinstance(value, list):
        for item in value: walk(item)
    elif isinstance(value, str): words.add(value)
for path in pathlib.Path(sys.argv[1]).glob("*.json"): walk(json.loads(path.read_text()))
for word in sorted(words):
    if len(word) < 64: print(json.dumps(json.dumps(word)))
PY
}

# Seeds: the corpus's vectors and dictionary from the main package's forge; JSON targets get the corpus's JSON files.
seeds=$fuzz/.seeds
if [ ! -f "$seeds/receipt.dict" ]; then
    echo "fuzz.sh: writing seeds with forge seeds" >&2
    (cd "$root" && swift build --product forge >&2 && "$(swift build --show-bin-path)/forge" seeds --out "$seeds/receipts" --dict "$seeds/receipt.dict" >&2)
    mkdir -p "$seeds/json" "$seeds/recipes"
    cp "$root"/Vectors/manifest.json "$root"/examples/*.json "$seeds/json/"
    for schema in "$root"/Vectors/schema/*.json; do cp "$schema" "$seeds/json/schema-$(basename "$schema")"; done
    # Recipes: real mutants' recipes, and a dictionary of every string they use (mutation ids, parameter names).
    (cd "$root" && "$(swift build --show-bin-path)/forge" mutate --from '*' --seed 1 --count 300 --out "$seeds/mutants" >&2)
    cp "$seeds"/mutants/*.recipe.json "$seeds/recipes/"
    recipe_words "$seeds/recipes" >"$seeds/recipe.dict"
fi
# JWS of every kind (mode byte 0: raw text) and receipts inside verifyReceipt requests (mode byte 2).
if [ ! -d "$seeds/jws" ]; then
    mkdir -p "$seeds/jws" "$seeds/verifyreceipt"
    forge_bin="$(cd "$root" && swift build --show-bin-path)/forge"
    for kind in transaction renewal app-transaction notification realtime; do
        for preset in appstore sandbox xcode-2023; do
            { printf '\x00'; "$forge_bin" jws make "$kind" --product p --renewals 1 --period P1M --preset "$preset" --now 2025-01-01T00:00:00Z -q; } >"$seeds/jws/$kind-$preset" || true
        done
    done
    for receipt in "$seeds"/receipts/*; do { printf '\x02'; cat "$receipt"; } >"$seeds/verifyreceipt/$(basename "$receipt")"; done
fi
# The same JWS as header and payload JSON (mode byte 1: header, 0x00, payload), so mutations edit the JSON itself
# (a signedDate of 1e300) rather than its base64url; and verifyReceipt request bodies (mode byte 0).
if [ ! -d "$seeds/jws-json" ]; then
    mkdir -p "$seeds/jws-json" "$seeds/verifyreceipt-json"
    python3 - "$seeds/jws" "$seeds/jws-json" "$seeds/receipts" "$seeds/verifyreceipt-json" <<'PY'
import base64, pathlib, sys
def unpad(part): return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
for path in pathlib.Path(sys.argv[1]).iterdir():
    parts = path.read_bytes()[1:].strip().split(b".")
    if len(parts) == 3:
        (pathlib.Path(sys.argv[2]) / path.name).write_bytes(b"\x01" + unpad(parts[0].decode()) + b"\x00" + unpad(parts[1].decode()))
for path in sorted(pathlib.Path(sys.argv[3]).iterdir())[:20]:
    data = base64.b64encode(path.read_bytes()).decode()
    body = '{"receipt-data":"%s","password":"s3cret","exclude-old-transactions":true}' % data
    (pathlib.Path(sys.argv[4]) / path.name).write_bytes(b"\x00" + body.encode())
PY
fi
# JWS recipes: every JWS vector's recorded recipe (its manifest provenance as the recipe's own steps), mutants'
# recipes, and choice bytes (any first byte but '{': base, mutations, parameter values; MutantRecipe(choosingJWSFrom:));
# their dictionary holds every word the recipes use and every JWS mutation id.
if [ ! -d "$seeds/jws-recipes" ]; then
    mkdir -p "$seeds/jws-recipes"
    forge_bin="$(cd "$root" && swift build --show-bin-path)/forge"
    for seed in 1 2 3; do "$forge_bin" mutate --from 'jws-*' --seed "$seed" --count 100 --out "$seeds/jws-mutants" >&2; done
    cp "$seeds"/jws-mutants/*.recipe.json "$seeds/jws-recipes/"
    python3 - "$root/Vectors/manifest.json" "$seeds/jws-recipes" <<'PY'
import json, pathlib, random, sys
out = pathlib.Path(sys.argv[2])
for vector in json.loads(pathlib.Path(sys.argv[1]).read_text())["vectors"]:
    if vector["id"].startswith("jws-"):
        provenance = vector["provenance"]
        recipe = {"base": vector["id"], "steps": [], "oracle": "none", "own": provenance["recipe"]}
        for key in ("seed", "scenario", "made", "notificationType", "subtype"):
            if key in provenance: recipe[key] = provenance[key]
        (out / ("own-" + vector["id"].replace("::", "-") + ".recipe.json")).write_text(json.dumps(recipe))
choices = random.Random(20)
for index in range(64):
    data = bytes([choices.randrange(0, 123)]) + bytes(choices.randrange(256) for _ in range(choices.randrange(4, 48)))
    (out / ("choices-%02d" % index)).write_bytes(data)
PY
    recipe_words "$seeds/jws-recipes" "$root/Sources/ReceiptForge/Mutations/MutationID.swift" >"$seeds/jws-recipe.dict"
fi
case $target in
    FuzzJWSRecipeReplay) inputs=("$seeds/jws-recipes"); base_dict=("$seeds/jws-recipe.dict") ;;
    FuzzJWSVerifier) inputs=("$seeds/jws" "$seeds/jws-json"); base_dict=() ;;
    FuzzVerifyReceipt) inputs=("$seeds/verifyreceipt" "$seeds/verifyreceipt-json"); base_dict=("$seeds/receipt.dict") ;;
    FuzzRecipeReplay) inputs=("$seeds/recipes"); base_dict=("$seeds/recipe.dict") ;;
    FuzzDecoders) inputs=("$seeds/json"); base_dict=() ;;
    *) inputs=("$seeds/receipts"); base_dict=("$seeds/receipt.dict") ;;
esac
# libFuzzer takes one dictionary: the target's own tokens and the extreme numbers, in one file.
cat "${base_dict[@]}" "$fuzz/numbers.dict" >"$seeds/$target.dict"
dict=(-dict="$seeds/$target.dict")
work=$fuzz/.corpus/$target
mkdir -p "$work" "$fuzz/FailCases"
time_limit=(); [ "$seconds" -gt 0 ] && time_limit=(-max_total_time="$seconds")
echo "fuzz.sh: $binary ${time_limit[*]} $*" >&2
# -detect_leaks=1: a leak is a finding too (lsan.supp says which reports are not); the artifact prefix puts
# findings where the tests replay them.
# A unit slower than -report_slow_units (10 s, the timeout) is written as <target>-slow-unit-<sha1> without stopping
# the run: it is a finding too, so the script fails when any new FailCases file appeared.
failcases_before=$(ls "$fuzz/FailCases")
set +e
LSAN_OPTIONS="suppressions=$fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
"$binary" "$work" "${inputs[@]}" "${dict[@]}" "${time_limit[@]}" -timeout=10 -rss_limit_mb=4096 -detect_leaks=1 -max_len=16384 \
    -artifact_prefix="$fuzz/FailCases/$target-" -print_final_stats=1 "$@" 2>&1 | tee "$fuzz/.corpus/$target.log" | grep -E '^(#[0-9]+ +pulse|==[0-9]+==ERROR|SUMMARY|Test unit written)' >&2
status=${PIPESTATUS[0]}
set -e
written=$(ls "$fuzz/FailCases" | comm -13 <(echo "$failcases_before") -)
if [ "$status" -ne 0 ] || [ -n "$written" ]; then
    echo "fuzz.sh: $target found something (exit $status; new: ${written:-none}); see $fuzz/.corpus/$target.log and FuzzTesting/FailCases/" >&2
    exit 1
fi
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|slowest_unit_time_sec|peak_rss_mb)|^#[0-9]+ +DONE' "$fuzz/.corpus/$target.log" >&2 || true
