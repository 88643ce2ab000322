#!/usr/bin/env python3
"""Apple's own app-store-server-library (PyPI) as an oracle for forged StoreKit 2 JWS.

    asl_verify_jws.py ROOT_PEM ENVIRONMENT BUNDLE_ID APP_APPLE_ID KIND JWS_FILE

KIND: transaction, renewal, app-transaction, notification, realtime. Runs SignedDataVerifier with the given
root (our TEST root), online checks off (on with ASL_ONLINE=1: OCSP for the leaf and the intermediate at their
AIA URLs, e.g. `forge serve --ocsp`), and prints one JSON line: {"verdict": "accept"|"reject", "status":
Apple's VerificationStatus name or null, "decoded": a few fields, for a notification also data.status and its
nested transaction and renewal info (RESCIND_CONSENT: appData and its AppTransaction), verified and decoded}. Exit 0 accept, 1 reject.
"""
import json
import os
import sys

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

root_pem, environment, bundle_id, app_apple_id, kind, path = sys.argv[1:7]
root = x509.load_pem_x509_certificate(open(root_pem, "rb").read()).public_bytes(Encoding.DER)
online = os.environ.get("ASL_ONLINE") == "1"
verifier = SignedDataVerifier([root], online, Environment(environment), bundle_id, int(app_apple_id) if app_apple_id != "-" else None)
text = open(path).read().strip()
method = {
    "transaction": verifier.verify_and_decode_signed_transaction,
    "renewal": verifier.verify_and_decode_renewal_info,
    "app-transaction": verifier.verify_and_decode_app_transaction,
    "notification": verifier.verify_and_decode_notification,
    "realtime": getattr(verifier, "verify_and_decode_realtime_request", None),
}[kind]
if method is None:
    print(json.dumps({"verdict": "unsupported", "status": None}))
    sys.exit(2)
try:
    decoded = method(text)
except VerificationException as error:
    print(json.dumps({"verdict": "reject", "status": error.status.name}))
    sys.exit(1)
except Exception as error:  # what the library lets escape (an OCSP body it cannot parse), named
    print(json.dumps({"verdict": "error", "status": type(error).__name__}))
    sys.exit(3)
NAMES = (
    "transactionId", "originalTransactionId", "bundleId", "notificationType", "subtype", "receiptType", "autoRenewStatus", "appAppleId",
    "expiresDate", "revocationDate", "revocationReason", "transactionReason", "expirationIntent", "isInBillingRetryPeriod",
    "gracePeriodExpiresDate", "priceIncreaseStatus", "productId", "autoRenewProductId", "inAppOwnershipType",
    "type", "offerType", "offerIdentifier", "offerDiscountType", "offerPeriod", "price", "currency", "storefront", "storefrontId",
    "subscriptionGroupIdentifier", "renewalPrice", "eligibleWinBackOfferIds", "purchaseDate",
    "rawOfferType", "revocationType", "revocationPercentage", "consumptionRequestReason", "tokenType", "tokenExpirationDate",
)


def fields_of(decoded):
    fields = {}
    for name in NAMES:
        value = getattr(decoded, name, None)
        if isinstance(value, list):
            fields[name] = [item if isinstance(item, (int, str)) else str(item) for item in value]
        elif value is not None:
            # Apple's enums are read as their wire values (str or int subclasses), unknown ones as raw values.
            fields[name] = value if isinstance(value, (int, str)) else str(value)
    return fields


fields = fields_of(decoded)
token = getattr(decoded, "externalPurchaseToken", None)
if token is not None:
    fields["externalPurchaseToken"] = fields_of(token)
# A notification's nested JWS, verified and decoded as Apple's library does: the state the notification carries.
data = getattr(decoded, "data", None)
if data is not None:
    if data.status is not None:
        fields["status"] = int(data.status)
    fields.update(fields_of(data))
    try:
        if data.signedTransactionInfo:
            fields["transaction"] = fields_of(verifier.verify_and_decode_signed_transaction(data.signedTransactionInfo))
        if data.signedRenewalInfo:
            fields["renewal"] = fields_of(verifier.verify_and_decode_renewal_info(data.signedRenewalInfo))
    except VerificationException as error:
        print(json.dumps({"verdict": "reject", "status": error.status.name, "nested": True}))
        sys.exit(1)
# RESCIND_CONSENT's appData: the app it is about and its AppTransaction, verified and decoded alike.
app_data = getattr(decoded, "appData", None)
if app_data is not None:
    fields["appData"] = {"bundleId": app_data.bundleId, "appAppleId": app_data.appAppleId, "environment": app_data.rawEnvironment}
    if app_data.signedAppTransactionInfo:
        try:
            app_transaction = verifier.verify_and_decode_app_transaction(app_data.signedAppTransactionInfo)
            fields["appTransaction"] = dict(fields_of(app_transaction), appTransactionId=app_transaction.appTransactionId)
        except VerificationException as error:
            print(json.dumps({"verdict": "reject", "status": error.status.name, "nested": True}))
            sys.exit(1)
print(json.dumps({"verdict": "accept", "status": None, "decoded": fields}))
