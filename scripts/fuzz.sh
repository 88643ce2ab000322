#!/usr/bin/env bash
# Builds one libFuzzer target of FuzzTesting/ with -sanitize=fuzzer,address and runs it.
set -euo pipefail

usage() {
    cat <<'TXT'
Usage: scripts/fuzz.sh TARGET [SECONDS | --runs N] [-- LIBFUZZER_OPTIONS...]
       scripts/fuzz.sh --list

Builds FuzzTesting's TARGET optimized, with libFuzzer and AddressSanitizer (FuzzTesting/.build, kept between runs)
and fuzzes it for SECONDS (default 60; 0: no time limit), or until N executions with --runs N (a campaign: no time
limit), inputs up to 16 KiB, seeded per target (see FuzzTesting/README.md: `forge seeds`, the corpus's JSON, recipes,
JWS, OCSP requests from openssl, .storekit files, results.json shards from `forge run`, Server API requests, HTTP
answers) with its token dictionary (FuzzTesting/Dictionaries/ and words drawn from the seeds); every target's
dictionary also holds FuzzTesting/numbers.dict (numbers that are no instant or no integer: 1e300, 1e400, Int64.max,
2^64, -0, NaN…). The working corpus is kept in FuzzTesting/.corpus/TARGET, so a second run goes on where the first
stopped. A crash, leak or timeout stops the run: its input is written to FuzzTesting/FailCases/TARGET-<kind>-<sha1>,
where `swift test` replays it (FailCaseTests), and the script exits 1; so does a unit slower than 10 s (written as
TARGET-slow-unit-<sha1>; the run goes on). FuzzWebhookAnswer runs in a network namespace of its own (unshare -rn,
loopback only), as an answer's redirect can name any host; without unshare it exits 69.

At the end it prints the run's figures (executions, wall time, exec/s, coverage as cov / ft, new units, slowest
unit, peak RSS) and the same as a row of FuzzTesting/README.md's campaign tables.

Targets: FuzzReceiptDecoder, FuzzReferenceValidator, FuzzInspect, FuzzRecipeReplay, FuzzDecoders, FuzzVerifyReceipt, FuzzJWSVerifier,
FuzzJWSRecipeReplay, FuzzServerAPI, FuzzOCSP, FuzzStoreKitConfiguration, FuzzRunMerge, FuzzWebhookAnswer.

Examples:
  scripts/fuzz.sh FuzzReceiptDecoder 600
  scripts/fuzz.sh FuzzDecoders 120 -- -jobs=2 -workers=2
  scripts/fuzz.sh FuzzServerAPI --runs 1000000     # a campaign: until a million executions
TXT
}

[ $# -ge 1 ] || { usage >&2; exit 64; }
case $1 in -h|--help) usage; exit 0 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
targets=(FuzzReceiptDecoder FuzzReferenceValidator FuzzInspect FuzzRecipeReplay FuzzDecoders FuzzVerifyReceipt FuzzJWSVerifier FuzzJWSRecipeReplay
    FuzzServerAPI FuzzOCSP FuzzStoreKitConfiguration FuzzRunMerge FuzzWebhookAnswer)
if [ "$1" = --list ]; then printf '%s\n' "${targets[@]}"; exit 0; fi
target=$1; shift
[[ " ${targets[*]} " == *" $target "* ]] || { echo "fuzz.sh: unknown target $target (one of ${targets[*]})" >&2; exit 64; }
seconds=60
runs=""
if [ "${1:-}" = --runs ]; then
    [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --runs takes a whole number of executions" >&2; exit 64; }
    runs=$2; seconds=0; shift 2
elif [ $# -gt 0 ] && [ "$1" != -- ]; then
    seconds=$1; shift
fi
[ "${1:-}" = -- ] && shift
[[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number" >&2; exit 64; }
isolate=()
if [ "$target" = FuzzWebhookAnswer ]; then
    unshare -rn true 2>/dev/null || { echo "fuzz.sh: FuzzWebhookAnswer needs unshare -rn (a network namespace of its own: a redirect can name any host)" >&2; exit 69; }
    isolate=(unshare -rn sh -c 'ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null; exec "$@"' sh)
fi

fuzz=$root/FuzzTesting
echo "fuzz.sh: building $target with -sanitize=fuzzer,address" >&2
(cd "$fuzz" && swift build -c release --product "$target" -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld -Xswiftc -enable-testing) >&2
binary=$(cd "$fuzz" && swift build -c release --show-bin-path -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld -Xswiftc -enable-testing)/$target

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
    recipe_words "$seeds/jws-recipes" "$root/Sources/StoreForge/Mutations/MutationID.swift" >"$seeds/jws-recipe.dict"
fi
# OCSP requests as openssl writes them (SHA-1 and SHA-256 CertIDs, with and without a nonce) for the bundled
# certificates and their issuers, each as a POST body (mode byte 0), a GET path (1), behind an answer's path (2) and
# after a control-route spec (3).
if [ ! -d "$seeds/ocsp" ]; then
    mkdir -p "$seeds/ocsp"
    certificates=$root/Certificates
    for pair in "jws/jws-wwdr-g6.pem jws/jws-signing.pem" "jws/jws-root-g3.pem jws/jws-wwdr-g6.pem" "wwdr-g5.pem receipt-signing.pem" "root.pem wwdr-g5.pem"; do
        read -r issuer certificate <<<"$pair"
        for digest in -sha1 -sha256; do
            for nonce in "" -no_nonce; do
                name=$(basename "$certificate" .pem)$digest$nonce
                openssl ocsp $digest $nonce -issuer "$certificates/$issuer" -cert "$certificates/$certificate" -reqout "$seeds/ocsp/$name.der" >/dev/null 2>&1 || continue
            done
        done
    done
    python3 - "$seeds/ocsp" <<'PY'
import base64, pathlib, sys, urllib.parse
folder = pathlib.Path(sys.argv[1])
for path in sorted(folder.glob("*.der")):
    der = path.read_bytes()
    stem = path.stem
    (folder / ("post-" + stem)).write_bytes(b"\x00" + der)
    (folder / ("get-" + stem)).write_bytes(b"\x01/" + urllib.parse.quote(base64.b64encode(der).decode(), safe="").encode())
    (folder / ("path-" + stem)).write_bytes(b"\x02/revoked/wwdrg6\x00" + der)
    (folder / ("spec-" + stem)).write_bytes(b"\x03jws-leaf=revoked,reason=keyCompromise\x00" + der)
    path.unlink()
PY
fi
# .storekit files: the example, and small files of every version with each offer kind, as the reader's tests write them.
if [ ! -d "$seeds/storekit" ]; then
    mkdir -p "$seeds/storekit" "$seeds/storekit-json"
    cp "$root/examples/storekit/Products.storekit" "$seeds/storekit-json/Products.json"
    python3 - "$seeds/storekit-json" <<'PY'
import json, pathlib, sys
folder = pathlib.Path(sys.argv[1])
def subscription(pid, level, **extra):
    item = {"displayPrice": "4.99", "groupNumber": level, "internalID": "S%d" % level, "productID": pid,
            "recurringSubscriptionPeriod": "P1M", "referenceName": pid, "subscriptionGroupID": "21000001", "type": "RecurringSubscription",
            "localizations": [{"displayName": pid.title(), "locale": "en_US", "description": ""}]}
    item.update(extra)
    return item
intro = {"internalID": "I1", "numberOfPeriods": 1, "paymentMode": "free", "subscriptionPeriod": "P1W"}
adhoc = [{"displayPrice": "1.99", "internalID": "A1", "numberOfPeriods": 3, "offerID": "half", "paymentMode": "payAsYouGo", "subscriptionPeriod": "P1M"}]
codes = [{"displayPrice": "0.99", "internalID": "C1", "numberOfPeriods": 2, "paymentMode": "payAsYouGo", "referenceName": "SPRING", "subscriptionPeriod": "P1M"}]
winback = [{"displayPrice": "9.99", "internalID": "W1", "numberOfPeriods": 1, "offerID": "back", "paymentMode": "payUpFront", "subscriptionPeriod": "P1Y"}]
for version in (2, 3, 4):
    monthly = subscription("pro.monthly", 1, introductoryOffer=intro, adHocOffers=adhoc)
    if version >= 3: monthly["codeOffers"] = codes
    if version >= 4: monthly["winbackOffers"] = winback
    document = {
        "identifier": "ABCD", "nonRenewingSubscriptions": [{"displayPrice": "14.99", "internalID": "N1", "productID": "season", "referenceName": "Season", "type": "NonRenewingSubscription"}],
        "products": [{"displayPrice": "0.99", "familyShareable": False, "internalID": "P1", "productID": "coins", "referenceName": "Coins", "type": "Consumable"},
                     {"displayPrice": "29.99", "familyShareable": True, "internalID": "P2", "productID": "lifetime", "referenceName": "Lifetime", "type": "NonConsumable"}],
        "settings": {"_storefront": "GBR", "_timeRate": 15, "_locale": "en_GB"},
        "subscriptionGroups": [{"id": "21000001", "name": "Pro", "localizations": [], "subscriptions": [monthly, subscription("pro.yearly", 2)]}],
        "version": {"major": version, "minor": 0}}
    (folder / ("v%d.json" % version)).write_text(json.dumps(document, indent=1))
PY
    for file in "$seeds"/storekit-json/*.json; do cp "$file" "$seeds/storekit/$(basename "$file" .json).storekit"; done
    recipe_words "$seeds/storekit-json" >"$seeds/storekit.dict"
fi
# results.json of `forge run` shards (the reference validator on the valid:: vectors, in three shards), compact, and
# joined by 0x00 as forge run merge takes several files.
if [ ! -d "$seeds/run-merge" ]; then
    mkdir -p "$seeds/run-merge" "$seeds/run-shards"
    forge_bin="$(cd "$root" && swift build --show-bin-path)/forge"
    for shard in 1 2 3; do
        (cd "$root" && "$forge_bin" run --target swift:reference --run 'valid::*' --shard "$shard/3" --quiet --results "$seeds/run-shards/shard$shard.json" >/dev/null 2>&1) || true
    done
    python3 - "$seeds/run-shards" "$seeds/run-merge" <<'PY'
import itertools, json, pathlib, sys
shards = [json.dumps(json.loads(p.read_text()), separators=(",", ":")).encode() for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json"))]
out = pathlib.Path(sys.argv[2])
for size in (1, 2, 3):
    for index, group in enumerate(itertools.combinations(shards, size)):
        (out / ("shards-%d-%d" % (size, index))).write_bytes(b"\x00".join(group))
PY
    recipe_words "$seeds/run-shards" >"$seeds/run-merge.dict"
fi
# Server API requests: every endpoint, for both apps' customers ({tx}, {otx}: production; {stx}, {sotx}: sandbox),
# with each way of authenticating. The first byte: auth (bits 3-4), rate limits (bit 5), environment (bits 6-7); then
# the endpoint as the router hands it over (its name, then its path parameters: transactionInfo/{tx}), query, body,
# authorization, X-Forge-Now and Host, split by 0x00. (The method number kept in each tuple is only its seed's name.)
if [ ! -d "$seeds/server-api" ]; then
    mkdir -p "$seeds/server-api"
    python3 - "$seeds/server-api" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
consumption = json.dumps({"customerConsented": True, "consumptionStatus": 1, "platform": 1, "sampleContentProvided": False, "deliveryStatus": 0,
    "appAccountToken": "", "accountTenure": 0, "playTime": 0, "lifetimeDollarsRefunded": 0, "lifetimeDollarsPurchased": 0, "userStatus": 0, "refundPreference": 1})
consumption2 = json.dumps({"customerConsented": True, "sampleContentProvided": False, "deliveryStatus": "DELIVERED", "refundPreference": "GRANT_FULL", "consumptionPercentage": 50000})
requests = [
    (0, "transactionInfo/{tx}", "", ""), (0, "transactionHistory/{otx}", "sort=DESCENDING&productType=AUTO_RENEWABLE&revoked=false", ""),
    (0, "transactionHistoryV1/{otx}", "", ""), (0, "subscriptionStatuses/{otx}", "status=1&status=2", ""),
    (0, "refundHistory/{otx}", "", ""), (0, "orderLookup/MTE0MjI2", "", ""),
    (0, "appTransactionInfo/{tx}", "", ""), (1, "consumptionV1/{tx}", "", consumption),
    (1, "consumptionV2/{tx}", "", consumption2), (2, "finishTransaction/{tx}", "", ""),
    (1, "setAppAccountToken/{otx}", "", json.dumps({"appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138"})),
    (1, "extendRenewalDate/{otx}", "", json.dumps({"extendByDays": 30, "extendReasonCode": 1, "requestIdentifier": "R1"})),
    (2, "massExtendRenewalDate", "", json.dumps({"extendByDays": 30, "extendReasonCode": 1, "requestIdentifier": "R2", "productId": "pro.yearly", "storefrontCountryCodes": ["USA"]})),
    (0, "massExtensionStatus/pro.yearly/R2", "", ""), (2, "requestTestNotification", "", ""),
    (0, "testNotificationStatus/5a2b0f3c", "", ""),
    (2, "notificationHistory", "paginationToken=abc", json.dumps({"startDate": 1700000000000, "endDate": 1800000000000, "onlyFailures": False})),
]
claims = '{"alg":"ES256","kid":"{kid}","typ":"JWT"}\x01{"iss":"{iss}","iat":{now},"exp":{exp},"aud":"appstoreconnect-v1","bid":"com.example.api"}'
for index, (method, path, query, body) in enumerate(requests):
    for environment, placeholder in ((0, ""), (1, "s")):
        fill = lambda text: text.replace("{tx}", "{%stx}" % placeholder).replace("{otx}", "{%sotx}" % placeholder)
        for auth, authorization in ((0, ""), (1, ""), (2, claims), (3, "Bearer a.b.c")):
            flags = method | auth << 3 | environment << 6
            fields = [fill(path), query, fill(body), authorization, "2025-02-01T00:00:00Z" if auth == 0 else "", ""]
            (out / ("%02d-%d-%d" % (index, environment, auth))).write_bytes(bytes([flags]) + "\x00".join(fields).encode())
    # Apple's host names choose the environment (bits 6-7 = 3).
    (out / ("%02d-host" % index)).write_bytes(bytes([method | 3 << 6]) + "\x00".join([path, query, body, "", "", "api.storekit-sandbox.apple.com:443"]).encode())
PY
fi
# A webhook's answers: whole HTTP answers (mode byte 0; {port} is the fuzz target's listener) and bodies of a 200 (1).
if [ ! -d "$seeds/webhook" ]; then
    mkdir -p "$seeds/webhook"
    python3 - "$seeds/webhook" <<'PY'
import pathlib, sys
out = pathlib.Path(sys.argv[1])
def answer(status, headers, body):
    return ("HTTP/1.1 %s\r\n" % status + "".join("%s: %s\r\n" % pair for pair in headers) + "\r\n").encode() + body
realtime = b'{"message":{"messageIdentifier":"a"}}'
whole = {
    "ok": answer("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(realtime)))], realtime),
    "no-content": answer("204 No Content", [], b""),
    "error": answer("500 Internal Server Error", [("Content-Length", "2")], b"no"),
    "redirect": answer("307 Temporary Redirect", [("Location", "http://127.0.0.1:{port}/again"), ("Content-Length", "0")], b""),
    "redirect-relative": answer("302 Found", [("Location", "/hook"), ("Content-Length", "0")], b""),
    "chunked": answer("200 OK", [("Transfer-Encoding", "chunked")], b"5\r\nhello\r\n0\r\n\r\n"),
    "close-delimited": b"HTTP/1.0 200 OK\r\n\r\n" + realtime,
    "short": answer("200 OK", [("Content-Length", "100")], b"{}"),
    "continue": b"HTTP/1.1 100 Continue\r\n\r\n" + answer("202 Accepted", [("Content-Length", "0")], b""),
}
for name, data in whole.items(): (out / name).write_bytes(b"\x00" + data)
for name, body in {"message": realtime, "alternate": b'{"alternateProduct":{"productId":"p"}}', "offer": b'{"promotionalOffer":{"promotionalOfferId":"o"}}',
                   "two": b'{"message":{},"promotionalOffer":{}}', "empty": b"{}"}.items():
    (out / ("body-" + name)).write_bytes(b"\x01" + body)
PY
fi
case $target in
    FuzzServerAPI) inputs=("$seeds/server-api"); base_dict=("$fuzz/Dictionaries/server-api.dict") ;;
    FuzzOCSP) inputs=("$seeds/ocsp"); base_dict=("$fuzz/Dictionaries/ocsp.dict") ;;
    FuzzStoreKitConfiguration) inputs=("$seeds/storekit"); base_dict=("$seeds/storekit.dict") ;;
    FuzzRunMerge) inputs=("$seeds/run-merge"); base_dict=("$seeds/run-merge.dict") ;;
    FuzzWebhookAnswer) inputs=("$seeds/webhook"); base_dict=("$fuzz/Dictionaries/webhook.dict") ;;
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
[ -n "$runs" ] && time_limit=(-runs="$runs")
echo "fuzz.sh: ${isolate[*]:+${isolate[0]} ${isolate[1]} } $binary ${time_limit[*]} $*" >&2
# -detect_leaks=1: a leak is a finding too (lsan.supp says which reports are not); the artifact prefix puts
# findings where the tests replay them.
# A unit slower than -report_slow_units (10 s, the timeout) is written as <target>-slow-unit-<sha1> without stopping
# the run: it is a finding too, so the script fails when any new FailCases file appeared.
failcases_before=$(ls "$fuzz/FailCases")
started=$(date +%s)
set +e
# malloc_context_size: allocation stacks deep enough to reach the one-time initializer (`_WZ`) lsan.supp names, past
# a decoder's recursion (FuzzRunMerge's corpus manifest is decoded some 60 frames below it; the default keeps 30).
# SWIFT_BACKTRACE: a trap is reported by libFuzzer; Swift's own backtracer reads the crashed process's memory, which
# AddressSanitizer reports as an overflow, and can hang holding the output pipe.
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="malloc_context_size=128${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
LSAN_OPTIONS="suppressions=$fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
"${isolate[@]}" "$binary" "$work" "${inputs[@]}" "${dict[@]}" "${time_limit[@]}" -timeout=10 -rss_limit_mb=4096 -detect_leaks=1 -max_len=16384 \
    -artifact_prefix="$fuzz/FailCases/$target-" -print_final_stats=1 "$@" 2>&1 | tee "$fuzz/.corpus/$target.log" | grep -E '^(#[0-9]+ +pulse|==[0-9]+==ERROR|SUMMARY|Test unit written)' >&2
status=${PIPESTATUS[0]}
set -e
elapsed=$(($(date +%s) - started))
written=$(ls "$fuzz/FailCases" | comm -13 <(echo "$failcases_before") -)
if [ "$status" -ne 0 ] || [ -n "$written" ]; then
    echo "fuzz.sh: $target found something (exit $status; new: ${written:-none}); see $fuzz/.corpus/$target.log and FuzzTesting/FailCases/" >&2
    exit 1
fi
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|slowest_unit_time_sec|peak_rss_mb)|^#[0-9]+ +DONE' "$fuzz/.corpus/$target.log" >&2 || true
# The figures of the run, and the same as a row of FuzzTesting/README.md's campaign tables.
python3 - "$fuzz/.corpus/$target.log" "$target" "$elapsed" <<'PY' >&2
import re, sys
log, target, elapsed = open(sys.argv[1], errors="replace").read(), sys.argv[2], int(sys.argv[3])
def stat(name):
    found = re.findall(r"^stat::%s:\s*(\d+)" % name, log, re.M)
    return int(found[-1]) if found else 0
done = re.findall(r"^#\d+\s+(?:DONE|pulse|NEW|REDUCE|INITED)\s.*?cov: (\d+) ft: (\d+)", log, re.M)
cov, ft = (int(done[-1][0]), int(done[-1][1])) if done else (0, 0)
runs, rate, rss = stat("number_of_executed_units"), stat("average_exec_per_sec"), stat("peak_rss_mb")
print("fuzz.sh: %s: %s executions in %s s (%s exec/s), coverage %s cov / %s ft, %s new units, slowest unit %s s, peak RSS %s MB, 0 findings"
      % (target, format(runs, ","), format(elapsed, ","), format(rate, ","), format(cov, ","), format(ft, ","), stat("new_units_added"), stat("slowest_unit_time_sec"), format(rss, ",")))
print("| %s | %s | %s s | %s | %s / %s | %s MB | 0 |" % (target, format(runs, ","), format(elapsed, ","), format(rate, ","), format(cov, ","), format(ft, ","), format(rss, ",")))
PY
