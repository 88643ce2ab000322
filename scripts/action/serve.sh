#!/usr/bin/env bash
# The action's serve step: starts `forge serve` in the background for the rest of the job, waits until it
# answers (its --ready-json line), and hands later steps what they need to reach it, as step outputs
# ($GITHUB_OUTPUT) and environment variables ($GITHUB_ENV):
#   url        RECEIPT_FORGE_URL        the base URL (verifyReceipt at /verifyReceipt, the Server API at /inApps/…,
#                                       sandbox under /sandbox)
#   key-id     RECEIPT_FORGE_KEY_ID     the App Store Connect-style API key the Server API accepts (none with
#   issuer-id  RECEIPT_FORGE_ISSUER_ID  api-key: none), made here by `forge ca api-key` unless api-key names one
#   key-path   RECEIPT_FORGE_KEY_PATH
#   roots      RECEIPT_FORGE_ROOTS      a folder with the TEST roots (root.pem, jws-root-g3.pem, …)
#   pid        RECEIPT_FORGE_PID        the server's process; `kill "$RECEIPT_FORGE_PID"` stops it early
#   log        RECEIPT_FORGE_LOG        its request log (JSON Lines, forge serve --log); its stderr is beside it
# The server stops when the job ends (the runner ends the processes a job leaves). A server that exits or does not
# answer within INPUT_TIMEOUT seconds fails the step with forge's own message.
set -euo pipefail
: "${GITHUB_OUTPUT:?the file GitHub reads step outputs from}"
work=${RUNNER_TEMP:?the temporary folder of the runner}/receipt-forge-serve
mkdir -p "$work"
ready=$work/ready.json log=$work/requests.jsonl errors=$work/serve.stderr roots=$work/roots
rm -f "$ready" "$log" "$errors"

arguments=(serve --listen "${INPUT_LISTEN:-127.0.0.1:0}" --ready-json --export-roots "$roots" --log "$log")
# Lists (scenarios) split on newlines and commas, never through a shell: a path with spaces stays one path.
while IFS= read -r scenario; do
  scenario=${scenario#"${scenario%%[![:space:]]*}"}; scenario=${scenario%"${scenario##*[![:space:]]}"}
  [ -n "$scenario" ] && arguments+=(--scenario "$scenario")
done < <(printf '%s\n' "${INPUT_SCENARIOS:-}" | tr ',' '\n')
[ -n "${INPUT_STOREKIT:-}" ] && arguments+=(--storekit "$INPUT_STOREKIT")
[ -n "${INPUT_NOW:-}" ] && arguments+=(--now "$INPUT_NOW")
[ -n "${INPUT_NOTIFY:-}" ] && arguments+=(--notify "$INPUT_NOTIFY")
[ -n "${INPUT_STATE:-}" ] && arguments+=(--state "$INPUT_STATE")
case "${INPUT_TLS:-false}" in
  true) arguments+=(--tls) ;;
  false | "") ;;
  *) echo "::error::tls must be true or false, not '$INPUT_TLS'"; exit 64 ;;
esac
key_id="" issuer_id="" key_path=""
case "${INPUT_API_KEY:-generate}" in
  none) arguments+=(--no-auth) ;;
  generate)
    rm -rf "$work/key"
    made=$(forge ca api-key --json --out "$work/key") || { echo "::error::forge ca api-key failed"; exit 70; }
    read -r key_id issuer_id key_path < <(python3 -c 'import json, sys; k = json.loads(sys.argv[1]); print(k["keyId"], k["issuerId"], k["keyPath"])' "$made")
    arguments+=(--api-key "$key_id=$key_path" --issuer-id "$issuer_id")
    ;;
  *=*)
    key_id=${INPUT_API_KEY%%=*} key_path=${INPUT_API_KEY#*=} issuer_id=${INPUT_ISSUER_ID:-}
    [ -n "$issuer_id" ] || { echo "::error::api-key KEY_ID=FILE needs issuer-id too"; exit 64; }
    arguments+=(--api-key "$INPUT_API_KEY" --issuer-id "$issuer_id")
    ;;
  *) echo "::error::api-key must be generate, none or KEY_ID=FILE, not '$INPUT_API_KEY'"; exit 64 ;;
esac

echo "forge ${arguments[*]}"
forge "${arguments[@]}" >"$ready" 2>"$errors" </dev/null &
pid=$!
timeout=${INPUT_TIMEOUT:-60}
case "$timeout" in '' | *[!0-9]*) echo "::error::timeout must be a number of seconds, not '$timeout'"; kill "$pid" 2>/dev/null; exit 64 ;; esac
deadline=$((SECONDS + timeout))
# One complete line (it ends in a newline) is the server's word that it listens.
until [ "$(tail -c 1 "$ready" 2>/dev/null | od -An -c | tr -d ' ')" = '\n' ]; do
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid" && status=0 || status=$?
    echo "::error::forge serve exited $status before it listened: $(tail -n 1 "$errors")"
    cat "$errors" >&2
    exit "$status"
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    kill "$pid" 2>/dev/null || true
    echo "::error::forge serve did not listen within $timeout s"
    cat "$errors" >&2
    exit 69
  fi
  sleep 0.1
done
url=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["baseUrl"])' "$ready")
echo "forge serve (pid $pid) answers at $url"
{
  echo "url=$url"; echo "key-id=$key_id"; echo "issuer-id=$issuer_id"; echo "key-path=$key_path"
  echo "roots=$roots"; echo "pid=$pid"; echo "log=$log"
} >>"$GITHUB_OUTPUT"
if [ -n "${GITHUB_ENV:-}" ]; then
  {
    echo "RECEIPT_FORGE_URL=$url"; echo "RECEIPT_FORGE_KEY_ID=$key_id"; echo "RECEIPT_FORGE_ISSUER_ID=$issuer_id"
    echo "RECEIPT_FORGE_KEY_PATH=$key_path"; echo "RECEIPT_FORGE_ROOTS=$roots"; echo "RECEIPT_FORGE_PID=$pid"
    echo "RECEIPT_FORGE_LOG=$log"
  } >>"$GITHUB_ENV"
fi
