"""Signed StoreKit 2 data: `forge jws make KIND`."""

from __future__ import annotations

from typing import Any

from ._run import arguments, run

#: The kinds forge signs.
KINDS = ("transaction", "renewal", "app-transaction", "notification", "realtime")


def make(kind: str, **options: Any) -> str:
    """The compact JWS of `kind` (transaction, renewal, app-transaction, notification, realtime), signed by the TEST
    PKI, as text without a trailing newline: what `SignedDataVerifier` takes. Options are `forge jws make`'s flags in
    Python's spelling: `product="pro.monthly", renewals=2, notification_type="DID_RENEW", spec="customer.json",
    now=datetime(...)`. A subscription notification implies an auto-renewable product."""
    return run(["jws", "make", kind, "-q"] + arguments(options)).stdout.decode("ascii").strip()
