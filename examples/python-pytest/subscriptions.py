"""A StoreKit 2 backend's subscription logic, as a Python server team writes it (no web framework: the routes call
these methods). It trusts nothing the device sends without asking Apple: the app's signed transaction is verified,
then its latest state fetched with Get Transaction Info; App Store Server Notifications keep it current."""

from __future__ import annotations

import datetime as dt
import json
from typing import Callable, Dict

from appstoreserverlibrary.api_client import APIException
from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2

#: Apple's errors worth a retry: 5000001 (general, retryable), 4290000 (rate limit).
RETRYABLE = {5000001, 4290000}


class TryAgainLater(Exception):
    """Apple's API is unavailable for now: answer 503 and let the app retry."""


class Subscriptions:
    def __init__(self, api_client, verifier, clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.timezone.utc)):
        self.api = api_client
        self.verifier = verifier
        self.clock = clock
        #: originalTransactionId → the entitlement it grants.
        self.entitlements: Dict[str, dict] = {}

    def purchase(self, signed_transaction: str) -> dict:
        """POST /purchases: the app sends `Transaction.jwsRepresentation` after a purchase."""
        claimed = self.verifier.verify_and_decode_signed_transaction(signed_transaction)
        try:
            info = self.api.get_transaction_info(claimed.transactionId)
        except APIException as error:
            if error.raw_api_error in RETRYABLE or error.http_status_code >= 500:
                raise TryAgainLater(str(error.raw_api_error)) from error
            raise
        return self._record(self.verifier.verify_and_decode_signed_transaction(info.signedTransactionInfo))

    def notification(self, body: bytes) -> int:
        """POST /app-store/notifications: Apple's webhook call. Returns the HTTP status to answer."""
        try:
            signed = json.loads(body)["signedPayload"]
            notification = self.verifier.verify_and_decode_notification(signed)
        except Exception:
            return 400
        if notification.notificationType == NotificationTypeV2.TEST or notification.data is None or notification.data.signedTransactionInfo is None:
            return 200
        transaction = self.verifier.verify_and_decode_signed_transaction(notification.data.signedTransactionInfo)
        entitlement = self._record(transaction)
        if notification.notificationType in (NotificationTypeV2.REFUND, NotificationTypeV2.REVOKE):
            entitlement["active"] = False
        entitlement["lastNotification"] = notification.rawNotificationType
        return 200

    def is_active(self, original_transaction_id: str) -> bool:
        entitlement = self.entitlements.get(original_transaction_id)
        return bool(entitlement and entitlement["active"] and entitlement["expires"] > self.clock())

    def _record(self, transaction) -> dict:
        expires = dt.datetime.fromtimestamp(transaction.expiresDate / 1000, dt.timezone.utc) if transaction.expiresDate else dt.datetime.max.replace(tzinfo=dt.timezone.utc)
        entitlement = self.entitlements.setdefault(transaction.originalTransactionId, {})
        entitlement.update(
            productId=transaction.productId,
            transactionId=transaction.transactionId,
            expires=expires,
            active=transaction.revocationDate is None and expires > self.clock(),
        )
        return entitlement
