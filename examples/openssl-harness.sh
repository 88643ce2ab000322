#!/bin/sh
# Exit-code harness (forge run --target exit:examples/openssl-harness.sh): the receipt arrives on stdin,
# the context in RF_* variables. It judges only what `openssl cms -verify` judges: signature and chain.
anchor=$(mktemp) && openssl x509 -inform DER -in "$RF_TRUST_ANCHOR" -out "$anchor" || exit 2
openssl cms -verify -binary -inform DER -CAfile "$anchor" -purpose any -attime "$(date -u -d "$RF_NOW" +%s)" \
    -out /dev/null 2>/dev/null
status=$?
rm -f "$anchor"
[ "$status" -eq 0 ] && exit 0
echo signature.invalid; exit 1
