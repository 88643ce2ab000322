# Exit-code harness around PyPI app-store-server-library 3.1.2 (Apple's), SignedDataVerifier: StoreKit 2 JWS.
# Configured as a server would be: the vector's trust anchor (RF_TRUST_ANCHOR, DER) as the only root, online checks
# off (on for an `online` vector, which names its OCSP responder in RF_OCSP_RESPONDER: declare --features online), RF_ENVIRONMENT, RF_BUNDLE_ID and RF_APP_APPLE_ID; the method by RF_ARTIFACT (jws-transaction ->
# verify_and_decode_signed_transaction, ...). Accept = it returned a decoded payload; reject = it raised.
# A notification's signedTransactionInfo and signedRenewalInfo (RESCIND_CONSENT's appData.signedAppTransactionInfo) are
# verified too, with the same verifier, as Apple's documentation tells servers to: verify_and_decode_notification alone
# leaves them unverified (by design; node#216).
# Apple's statuses are coarse (VERIFICATION_FAILURE covers signature and chain alike), so the row is judged
# at granularity none.
# Install: python3 -m venv .oracles/asl && .oracles/asl/bin/pip install app-store-server-library==3.1.2
# forge run --target 'exit:.oracles/asl/bin/python examples/harnesses/asl_jws.py' --artifacts jws --granularity none
# (--features jws, the older spelling, is an alias of --artifacts jws.)
import os, sys
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(2))  # a bug here is a harness error, not a reject
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier

root = open(os.environ["RF_TRUST_ANCHOR"], "rb").read()
app_apple_id = os.environ.get("RF_APP_APPLE_ID") or None
verifier = SignedDataVerifier(
    [root], bool(os.environ.get("RF_OCSP_RESPONDER")), Environment(os.environ.get("RF_ENVIRONMENT") or "Production"), os.environ.get("RF_BUNDLE_ID") or "",
    int(app_apple_id) if app_apple_id else None)
method = {
    "jws-transaction": verifier.verify_and_decode_signed_transaction,
    "jws-renewal": verifier.verify_and_decode_renewal_info,
    "jws-app-transaction": verifier.verify_and_decode_app_transaction,
    "jws-notification": verifier.verify_and_decode_notification,
    "jws-realtime": verifier.verify_and_decode_realtime_request,
}[os.environ["RF_ARTIFACT"]]
text = sys.stdin.buffer.read().decode("utf-8", "replace")
try:
    decoded = method(text)
    data = getattr(decoded, "data", None)
    if data is not None:
        if data.signedTransactionInfo is not None:
            verifier.verify_and_decode_signed_transaction(data.signedTransactionInfo)
        if data.signedRenewalInfo is not None:
            verifier.verify_and_decode_renewal_info(data.signedRenewalInfo)
    app_data = getattr(decoded, "appData", None)
    if app_data is not None and app_data.signedAppTransactionInfo is not None:
        verifier.verify_and_decode_app_transaction(app_data.signedAppTransactionInfo)
except Exception as error:  # VerificationException, and whatever its decoders raise on hostile payloads
    sys.exit(f"{type(error).__name__}: {getattr(error, 'status', error)!r}"[:300])
