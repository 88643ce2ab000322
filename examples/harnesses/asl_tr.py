# Exit-code harness around PyPI app-store-server-library 3.1.2 (Apple's), ReceiptUtility.extract_transaction_id_from_transaction_receipt,
# for iOS 6 transaction receipts. EXTRACT ONLY: two regular expressions find purchase-info in the outer plist and transaction-id in
# the inner one; nothing is verified (no signature, certificate, chain, bundle id, structure). Accept = it returned a transaction
# id, which code built on it goes on to use; reject = it returned None or raised. The row shows why extract-only code is not validation.
# The trust anchor and every RF_* variable are unused; no clock.
# Install: python3 -m venv .oracles/asl && .oracles/asl/bin/pip install app-store-server-library==3.1.2
# forge run --target 'exit:.oracles/asl/bin/python examples/harnesses/asl_tr.py' --artifacts transaction-receipt --granularity none
import base64, os, sys
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(2))  # a bug here is a harness error, not a reject
from appstoreserverlibrary.receipt_utility import ReceiptUtility

data = sys.stdin.buffer.read()
try: transaction_id = ReceiptUtility().extract_transaction_id_from_transaction_receipt(base64.b64encode(data).decode())
except (ValueError, UnicodeDecodeError) as error: sys.exit(f"ReceiptUtility: {error!r}")  # not base64, or not UTF-8 inside
if transaction_id is None: sys.exit("ReceiptUtility: no purchase-info or no transaction-id found")
