# Exit-code harness around PyPI iap_local_receipt 0.2.0: IAPReceiptVerifier.verify_and_parse (OpenSSL PKCS7_verify: signature,
# then the chain to the root at the receipt's creation date, S/MIME signing purpose) and IAPReceipt.validate (bundle id, app
# version, and the device hash, checked only when given all three: so RF_APP_VERSION falls back to the receipt's own).
# No clock injection: the chain is judged at the receipt's creation date, never at RF_NOW. Root: RF_TRUST_ANCHOR as PEM.
# Install: python3 -m venv .oracles/iap && .oracles/iap/bin/pip install iap_local_receipt==0.2.0 pyOpenSSL==22.0.0 cryptography==37.0.4
# forge run --target 'exit:.oracles/iap/bin/python examples/harnesses/iap.py' --features device-hash,sha1,robustness,large --granularity coarse
import base64, binascii, os, ssl, sys
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(2))  # a bug here is a harness error, not a reject
from iap_local_receipt import IAPReceiptVerifier
from iap_local_receipt.iap_pkcs7_verifier import PKCS7VerifyError
data, env = sys.stdin.buffer.read(), os.environ.get
try:  # base64 text is decoded as the library's own tests.py does; validate's last check (a product id) is not ours
    receipt = IAPReceiptVerifier(ca_cert_string=ssl.DER_cert_to_PEM_cert(open(env("RF_TRUST_ANCHOR"), "rb").read())) \
        .verify_and_parse(data if data[:1] == b"\x30" else base64.b64decode(data))
    receipt.validate(None, env("RF_BUNDLE_ID"), env("RF_APP_VERSION") or receipt.receipt.get("application_version"), env("RF_DEVICE_ID"))
except Exception as error:  # AttributeError: its PKCS7VerifyError() calls ERR_error_string, missing: the chain step failed
    if str(error).startswith("product_id"): sys.exit(0)
    loading = isinstance(error, PKCS7VerifyError) and isinstance(error.args[0], Exception)  # d2i_PKCS7 refused the bytes
    print("input" if isinstance(error, binascii.Error) else "chain" if isinstance(error, AttributeError) else "container" if loading
          else "signature" if isinstance(error, PKCS7VerifyError) else "binding" if "does not match" in str(error) else "payload"); sys.exit(repr(error))
