"""receipt-forge for Python: Apple's in-app purchase artefacts and a stand-in for Apple's servers, in tests.

    import receipt_forge
    receipt_forge.forge("--version")                       # the bundled forge, any command
    jws = receipt_forge.jws.make("transaction", product="pro.monthly", renewals=2)
    receipt = receipt_forge.receipts.make(product="pro.monthly")
    with receipt_forge.Server(scenarios=["customer.json"], now="2025-01-01T00:00:00Z") as server:
        client = server.api_client("sandbox")               # Apple's AppStoreServerAPIClient, pointed here
        server.advance("P1M"); server.fault("sandbox/transactionInfo:status=5000001,count=1")

Every refusal is one :class:`ForgeError`: forge's one-line message and its exit code. The pytest plugin
(`receipt_forge.pytest_plugin`, loaded by pytest on its own) gives the fixtures forge_server, forge_server_session,
forge_jws and forge_receipt.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from . import jws, receipts
from ._run import BINARY_VARIABLE, ForgeError, binary, arguments as _arguments, run as _run
from .server import Server

__all__ = ["ForgeError", "Server", "forge", "jws", "receipts", "notify", "export_roots", "binary", "BINARY_VARIABLE", "__version__"]

__version__ = "0.0.0"  # scripts/wheel.sh writes the release's version here


def forge(*args: Any, input: Optional[bytes] = None, timeout: float = 120) -> str:
    """Runs the bundled `forge` with `args` and returns its stdout as text; a refusal raises :class:`ForgeError`."""
    return _run(args, input=input, timeout=timeout).stdout.decode("utf-8", "replace")


def notify(url: str, **options: Any) -> dict:
    """Signs one App Store Server Notification V2 and POSTs it to `url` as Apple does (`forge notify URL --json`):
    options as `jws.make` takes them (`notification_type="DID_RENEW"`, `product="pro.monthly"`, `spec=FILE`, …).
    Returns how the attempt ended, as forge prints it: `sendAttemptResult` ("SUCCESS", "TIMED_OUT", …), `httpStatus`,
    `latencyMilliseconds`; an attempt that failed is a result too, not an exception (forge exits 1)."""
    import json

    return json.loads(_run(["notify", url, "--json"] + _arguments(options), success=(0, 1)).stdout)


def export_roots(folder: "os.PathLike | str") -> Dict[str, str]:
    """Writes the TEST roots into `folder` (`forge ca export --out`): each as .pem and .der. Returns the .pem paths by
    name: `jws` (what SignedDataVerifier trusts: read its .der), `receipt` (receipts, and forge serve --tls),
    `storekit`, `jws-xcode`."""
    paths: Dict[str, str] = {}
    for line in _run(["ca", "export", "--out", os.fspath(folder)]).stdout.decode().splitlines():
        path, _, name = line.partition("  --root ")
        if name:
            paths[name.strip()] = path.strip()
    return paths
