"""App Store receipts (StoreKit 1, PKCS#7): `forge make`."""

from __future__ import annotations

import os
import tempfile
from typing import Any

from ._run import arguments, run


def make(**options: Any) -> bytes:
    """A receipt's DER bytes, signed by the TEST PKI (verifyReceipt's `receipt-data` is their base64). Options are
    `forge make`'s flags in Python's spelling: `product="pro.monthly", renewals=2, preset="sandbox", spec=FILE`."""
    with tempfile.TemporaryDirectory(prefix="receipt-forge-") as folder:
        path = os.path.join(folder, "receipt.der")
        run(["make", "-q", "-o", path] + arguments(options))
        with open(path, "rb") as made:
            return made.read()
