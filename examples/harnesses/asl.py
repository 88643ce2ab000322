# Exit-code harness around PyPI app-store-server-library 3.1.2 (Apple's), ReceiptUtility.extract_transaction_id_from_app_receipt.
# PARSE ONLY: it walks ContentInfo -> SignedData -> eContent -> payload SET to the first in-app transaction id and verifies
# nothing (no signature, chain, root, marker OIDs, bundle id, device hash, time). Accept = it parsed; reject = it raised.
# The trust anchor and every RF_* variable are unused; no clock. A row for what "just read the receipt" lets through.
# Install: python3 -m venv .oracles/asl && .oracles/asl/bin/pip install app-store-server-library==3.1.2
# forge run --target 'exit:.oracles/asl/bin/python examples/harnesses/asl.py' --artifacts receipt --features xcode,sha1,robustness,large,transport-decoding --granularity none
import base64, os, sys
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(2))  # a bug here is a harness error, not a reject
from appstoreserverlibrary.receipt_utility import ReceiptUtility

data = sys.stdin.buffer.read()
try: ReceiptUtility().extract_transaction_id_from_app_receipt(base64.b64encode(data).decode() if data[:1] == b"\x30" else data.decode("utf-8", "replace"))
except ValueError as error: sys.exit(f"ReceiptUtility: {error!r}")  # its only failure: "does not match the expected format"
