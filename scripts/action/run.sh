#!/usr/bin/env bash
# The action's run step: `forge run` with the action's inputs (INPUT_*), the corpus of the forge installed
# (Vectors/ beside the action), the Markdown report appended to $GITHUB_STEP_SUMMARY, `exit-code` written to
# $GITHUB_OUTPUT, and the step ending with forge run's exit code. JUnit, HTML and results.json stay where the
# inputs say, for actions/upload-artifact (and `forge run merge` of shards).
set -uo pipefail
: "${INPUT_TARGET:?the target input is required}"
vectors=${RECEIPT_FORGE_VECTORS:-${GITHUB_ACTION_PATH:?}/Vectors}
report=$(mktemp)
trap 'rm -f "$report"' EXIT
arguments=(run --vectors "$vectors" --target "$INPUT_TARGET" --markdown "$report")
[ -n "${INPUT_PROFILE:-}" ] && arguments+=(--profile "$INPUT_PROFILE")
[ -n "${INPUT_FEATURES:-}" ] && arguments+=(--features "$INPUT_FEATURES")
[ -n "${INPUT_ARTIFACTS:-}" ] && arguments+=(--artifacts "$INPUT_ARTIFACTS")
[ -n "${INPUT_BASELINE:-}" ] && arguments+=(--baseline "$INPUT_BASELINE")
[ -n "${INPUT_SHARD:-}" ] && arguments+=(--shard "$INPUT_SHARD")
[ -n "${INPUT_JUNIT:-}" ] && arguments+=(--junit "$INPUT_JUNIT")
[ -n "${INPUT_HTML:-}" ] && arguments+=(--html "$INPUT_HTML")
[ -n "${INPUT_RESULTS:-}" ] && arguments+=(--results "$INPUT_RESULTS")
echo "forge ${arguments[*]}"
forge "${arguments[@]}"
status=$?
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -s "$report" ]; then cat "$report" >>"$GITHUB_STEP_SUMMARY"; fi
[ -n "${GITHUB_OUTPUT:-}" ] && echo "exit-code=$status" >>"$GITHUB_OUTPUT"
case $status in
  0) ;;
  1) echo "::error::receipt-forge: the validator fails the corpus (exit 1): see the job summary and $INPUT_JUNIT" ;;
  2) echo "::error::receipt-forge: the harness is broken (exit 2): it could not be judged" ;;
  *) echo "::error::receipt-forge: forge run exited $status" ;;
esac
exit $status
