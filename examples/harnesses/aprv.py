# Exit-code harness around PyPI apple-purchase-receipt-verifier 0.12.0 ("aprv"), Verifier.verify_receipt: signature,
# chain to the given root, Apple's marker OIDs, certificate validity at the receipt's creation date (all inside its
# aprv.wasm core). It checks no bundle id, version, environment, device hash or receipt expiry (its README leaves them
# to the caller), and this adapter adds none. Clock: RF_NOW via Config(clock=), used only when a receipt has no date.
# Install: python3 -m venv .oracles/aprv && .oracles/aprv/bin/pip install apple-purchase-receipt-verifier==0.12.0
# Root: RF_TRUST_ANCHOR (DER, as is). forge run --target 'exit:.oracles/aprv/bin/python examples/harnesses/aprv.py'
#   --features sha1,robustness,large,transport-decoding --granularity coarse --timeout 20   (first run compiles aprv.wasm: slow)
import base64, datetime, os, sys
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(2))  # a bug here is a harness error, not a reject
from apple_purchase_receipt_verifier import Config, Reason, Verifier
data = sys.stdin.buffer.read()
now = int(datetime.datetime.fromisoformat(os.environ["RF_NOW"].replace("Z", "+00:00")).timestamp() * 1000)
verifier = Verifier(Config(roots=[open(os.environ["RF_TRUST_ANCHOR"], "rb").read()], clock=lambda: now))
result = verifier.verify_receipt(base64.b64encode(data).decode() if data[:1] == b"\x30" else data.decode("utf-8", "replace"))
if result.verified: sys.exit(0)
said = result.failure.message  # MALFORMED also covers base64 and "signer certificate not embedded"
family = {Reason.MALFORMED: "input" if "base64" in said else "signature" if "signer" in said else "container", Reason.TOO_LARGE: "input",
          Reason.INVALID_SIGNATURE: "signature", Reason.UNREADABLE_PAYLOAD: "payload"}.get(result.failure.reason, "chain")
if result.failure.reason == Reason.INTERNAL_ERROR: print(result.failure.message, file=sys.stderr); sys.exit(2)
print(family); sys.exit(f"{result.failure.reason.value}: {result.failure.message}")  # stderr, exit 1
