"""`forge serve` as a context manager: started on a free loopback port, ready when it says so, gone with the test."""

from __future__ import annotations

import atexit
import datetime as _dt
import json
import os
import selectors
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from ._run import NOT_FOUND, ForgeError, arguments, binary, one_line, run, value

Scenario = Union[str, os.PathLike, dict]

#: The environments of Apple's clients, by the names this package takes.
ENVIRONMENTS = {"production": "PRODUCTION", "sandbox": "SANDBOX", "local-testing": "LOCAL_TESTING", "local_testing": "LOCAL_TESTING"}

_running: "weakref.WeakSet[Server]" = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    # A script that never left its `with`: the server goes with the interpreter (--exit-with-parent covers a crash).
    for server in list(_running):
        server.stop()


class Server:
    """`forge serve` on 127.0.0.1, a free port, until :meth:`stop` (or the end of the `with`).

    `scenarios`: paths of scenario JSON files (or folders of them), or dicts written to files for you, one customer
    each; `storekit` an Xcode .storekit file (`products` the extra customer's purchases); `now` the server clock (a
    datetime or "2025-01-01T00:00:00Z"; default the wall clock); `notify` / `notify_sandbox` your webhooks; `state` a
    SQLite file; `faults` specs as `--fault` takes them; `auth` "keys" (a fresh App Store Connect-style key the
    server accepts: :attr:`key_id`, :attr:`issuer_id`, :attr:`key_path`) or "none" (`--no-auth`); `tls` serves
    HTTPS (the control calls trust the TEST root themselves); `options` any other `forge serve` flag in Python's
    spelling (`time_rate=3600`). Started with `--exit-with-parent`: a test process that dies takes the server
    with it. A server that does not start raises :class:`ForgeError` with forge's message and exit code.
    """

    def __init__(
        self,
        scenarios: Iterable[Scenario] = (),
        *,
        storekit: Optional[Union[str, os.PathLike]] = None,
        products: Sequence[str] = (),
        now: Optional[Union[str, _dt.datetime]] = None,
        notify: Optional[str] = None,
        notify_sandbox: Optional[str] = None,
        state: Optional[Union[str, os.PathLike]] = None,
        faults: Sequence[str] = (),
        auth: str = "keys",
        tls: bool = False,
        listen: str = "127.0.0.1:0",
        ready_within: float = 60,
        **options: Any,
    ):
        if isinstance(scenarios, (str, os.PathLike, dict)):  # one scenario, not a list of them
            scenarios = [scenarios]
        if auth not in ("keys", "none"):
            raise ValueError(f"auth is 'keys' or 'none', not {auth!r}")
        self._folder = Path(tempfile.mkdtemp(prefix="receipt-forge-serve-"))
        self._process: Optional[subprocess.Popen] = None
        self._stderr = None
        self.key_id: Optional[str] = None
        self.issuer_id: Optional[str] = None
        self.key_path: Optional[str] = None
        try:
            words = ["serve", "--listen", listen, "--ready-json", "--exit-with-parent", "--export-roots", str(self._folder / "roots")]
            for index, scenario in enumerate(scenarios):
                words += ["--scenario", self._scenario_file(scenario, index)]
            if auth == "keys":
                key = json.loads(run(["ca", "api-key", "--json", "--out", str(self._folder / "keys")]).stdout)
                self.key_id, self.issuer_id, self.key_path = key["keyId"], key["issuerId"], key["keyPath"]
                words += key["serveArguments"]
            else:
                words.append("--no-auth")
            words += arguments(
                dict(storekit=storekit, product=list(products), now=now, notify=notify, notify_sandbox=notify_sandbox, state=state, fault=list(faults), tls=tls)
            )
            words += arguments(options)
            self._start(words, ready_within)
        except BaseException:
            self.stop()
            raise
        _running.add(self)

    # MARK: starting and stopping

    def _scenario_file(self, scenario: Scenario, index: int) -> str:
        if isinstance(scenario, dict):
            path = self._folder / f"scenario-{index}.json"
            path.write_text(json.dumps(scenario))
            return str(path)
        return os.fspath(scenario)

    def _start(self, words: List[str], within: float) -> None:
        command = [binary()] + [value(word) for word in words]
        self._stderr = open(self._folder / "stderr.log", "w+b")
        try:
            self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr)
        except OSError as error:
            raise ForgeError(f"cannot run {command[0]}: {error.strerror}", NOT_FOUND, command) from error
        line = self._first_line(within)
        if line is None:
            try:  # stdout ended: the process is ending too
                code = self._process.wait(10)
            except subprocess.TimeoutExpired:
                code = None
            said = self.stderr()
            if code is None:
                raise ForgeError(f"forge serve closed its stdout without a ready line: {one_line(said)}", 70, command, said)
            raise ForgeError(one_line(said), code, command, said)
        self.ready: Dict[str, Any] = json.loads(line)
        self.port: int = self.ready["port"]
        self.pid: int = self.ready["pid"]
        self.base_url: str = self.ready["baseUrl"]
        self.roots: Dict[str, str] = self.ready["roots"]
        tls = self.ready.get("tls")
        self._context = ssl.create_default_context(cafile=tls["rootPath"]) if tls else None

    def _first_line(self, within: float) -> Optional[bytes]:
        """The ready line, or None when the server ends first; a server silent for `within` seconds is killed."""
        assert self._process is not None and self._process.stdout is not None
        stream = self._process.stdout
        deadline = time.monotonic() + within
        said = b""
        with selectors.DefaultSelector() as selector:
            selector.register(stream, selectors.EVENT_READ)
            while b"\n" not in said:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    self._process.kill()
                    self._process.wait()
                    said_so_far = self.stderr()
                    raise ForgeError(f"forge serve did not say it was ready within {within} s: {one_line(said_so_far)}", 124, self._process.args, said_so_far)
                chunk = os.read(stream.fileno(), 65536)
                if not chunk:
                    return None
                said += chunk
        return said.split(b"\n", 1)[0]

    def stop(self, within: float = 15) -> Optional[int]:
        """Stops the server (SIGTERM, then SIGKILL after `within` seconds) and removes its folder; its exit code."""
        _running.discard(self)
        process, self._process = self._process, None
        code = None
        if process is not None:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(within)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(within)
            code = process.returncode
            if process.stdout is not None:
                process.stdout.close()
        if self._stderr is not None:
            self._last_stderr = self.stderr()
            self._stderr.close()
            self._stderr = None
        shutil.rmtree(self._folder, ignore_errors=True)
        return code

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exception: Any) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stderr(self) -> str:
        """What the server said on stderr so far (its text lines, warnings)."""
        if self._stderr is None:
            return getattr(self, "_last_stderr", "")
        self._stderr.flush()
        with open(self._stderr.name, "rb") as said:
            return said.read().decode("utf-8", "replace")

    # MARK: what a client needs

    def url(self, environment: str = "sandbox", api: str = "serverApi") -> str:
        """The base URL of `environment`'s App Store Server API (`api="serverApi"`) or its verifyReceipt endpoint
        (`api="verifyReceipt"`)."""
        return self.ready["environments"][_ready_name(environment)][api]

    @property
    def key(self) -> Optional[bytes]:
        """The API key's .p8 (PEM) bytes, what `AppStoreServerAPIClient` takes as signing_key; None with auth="none"."""
        return Path(self.key_path).read_bytes() if self.key_path else None

    def root(self, name: str = "jws", der: bool = False) -> bytes:
        """A TEST root's bytes: `jws` (StoreKit 2, what SignedDataVerifier trusts), `receipt` (receipts, and TLS),
        `storekit`, `jws-xcode`; PEM, or DER with `der=True`."""
        path = self.roots[name]
        return Path(path[: -len(".pem")] + ".der" if der else path).read_bytes()

    def ids(self) -> Dict[str, Any]:
        """`GET /_forge/ids`: per customer its bundle id, environment, appAppleId, appTransactionId and per purchase
        the original and latest transaction id and the latest's order id, at the server clock."""
        return json.loads(self._control("GET", "/ids"))

    def customer(self, index: int = 0) -> Dict[str, Any]:
        """One customer of :meth:`ids` (in scenario order)."""
        return self.ids()["customers"][index]

    def scenarios(self) -> List[dict]:
        """`GET /_forge/scenarios`: each customer's scenario as the server holds it (the API's changes appended)."""
        return json.loads(self._control("GET", "/scenarios"))

    # MARK: the clock, faults, the log

    def now(self) -> _dt.datetime:
        """The server clock."""
        text = json.loads(self._control("GET", "/clock"))["now"]
        return _dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=_dt.timezone.utc)

    def advance(self, duration: Union[int, float, str, _dt.timedelta]) -> _dt.datetime:
        """Moves the server clock forward by seconds, a timedelta or an ISO 8601 period ("P1M"); notifications due
        by then are sent. Returns the new clock."""
        if isinstance(duration, _dt.timedelta):
            duration = duration.total_seconds()
        body = {"advance": duration if isinstance(duration, str) else int(duration)}
        self._control("POST", "/clock", body)
        return self.now()

    def set_now(self, instant: Union[str, _dt.datetime]) -> _dt.datetime:
        """Moves the server clock forward to `instant` (it never goes back). Returns the new clock."""
        self._control("POST", "/clock", {"now": value(instant)})
        return self.now()

    def fault(self, spec: str) -> None:
        """Adds a fault, as `--fault` takes it: "sandbox/transactionInfo:status=5000001,count=1", "production:http=503"."""
        self._control("POST", "/faults", spec)

    def clear_faults(self) -> None:
        self._control("DELETE", "/faults")

    def log(self) -> List[Dict[str, Any]]:
        """The request log, oldest first: one dict per request (endpoint, method, path, status, …)."""
        return [json.loads(line) for line in self._control("GET", "/log").splitlines() if line.strip()]

    def clear_log(self) -> None:
        self._control("DELETE", "/log")

    def _control(self, method: str, path: str, body: Any = None) -> str:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.ready["control"]["url"] + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30, context=self._context) as answer:
                return answer.read().decode("utf-8")
        except urllib.error.HTTPError as error:
            said = error.read().decode("utf-8", "replace").strip()
            raise ForgeError(f"{method} /_forge{path}: HTTP {error.code}: {said}", error.code) from None

    # MARK: Apple's library, pointed here

    def api_client(self, environment: str = "sandbox", bundle_id: Optional[str] = None, asynchronous: bool = False):
        """Apple's `AppStoreServerAPIClient` (or `AsyncAppStoreServerAPIClient`) for `environment` ("production",
        "sandbox", "local-testing"), its base URL this server's, signing with this server's key. `bundle_id`: the
        first customer's of that environment unless given. Needs app-store-server-library."""
        from appstoreserverlibrary.api_client import AppStoreServerAPIClient, AsyncAppStoreServerAPIClient
        from appstoreserverlibrary.models.Environment import Environment

        key, key_id, issuer_id = self.key, self.key_id, self.issuer_id
        if key is None:  # --no-auth: any token passes, so a throwaway key signs it
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ec

            key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
            key_id, issuer_id = "NOAUTHKEY0", "00000000-0000-0000-0000-000000000000"
        kind = AsyncAppStoreServerAPIClient if asynchronous else AppStoreServerAPIClient
        client = kind(key, key_id, issuer_id, bundle_id or self._bundle_id(environment), getattr(Environment, ENVIRONMENTS[environment]))
        client._base_url = self.url(environment)  # the seam Documentation/server-api-clients.md describes
        return client

    def verifier(self, environment: str = "sandbox", bundle_id: Optional[str] = None, app_apple_id: Optional[int] = None):
        """Apple's `SignedDataVerifier` over the TEST JWS root for `environment` ("production" or "sandbox"): the
        bundle id and, in production, the app Apple id of the first customer of that environment unless given."""
        from appstoreserverlibrary.models.Environment import Environment
        from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier

        if environment not in ("production", "sandbox"):
            raise ValueError("verify as production or sandbox: a LOCAL_TESTING verifier checks no signature")
        customer = self._first_customer(environment) if bundle_id is None or (environment == "production" and app_apple_id is None) else {}
        bundle_id = bundle_id or customer.get("bundleId")
        if app_apple_id is None:
            app_apple_id = customer.get("appAppleId")
        return SignedDataVerifier([self.root("jws", der=True)], False, getattr(Environment, ENVIRONMENTS[environment]), bundle_id, app_apple_id)

    def _first_customer(self, environment: str) -> Dict[str, Any]:
        wanted = {"production": "Production", "sandbox": "Sandbox"}.get(environment)
        for customer in self.ids()["customers"]:
            if wanted is None or customer.get("environment") == wanted:
                return customer
        raise ForgeError(f"no {environment} customer: give bundle_id (and app_apple_id), or a scenario of that environment", 64)

    def _bundle_id(self, environment: str) -> str:
        try:
            return self._first_customer(environment)["bundleId"]
        except ForgeError:
            return "com.example.app"


def _ready_name(environment: str) -> str:
    if environment not in ENVIRONMENTS:
        raise ValueError(f"environment is production, sandbox or local-testing, not {environment!r}")
    return "localTesting" if environment.startswith("local") else environment
