"""pytest fixtures for receipt-forge (registered through the `pytest11` entry point: installing the wheel is enough).

    @pytest.mark.forge(scenarios=["tests/customer.json"], now="2025-01-01T00:00:00Z", faults=[...])
    def test_renewal(forge_server):
        client = forge_server.api_client("sandbox")
        ...

`forge_server` is a fresh `forge serve` per test: its scenarios and clock come from the test's `forge` marker, else
from the `forge_scenarios` and `forge_now` fixtures (override them in a conftest.py); any other marker keyword is a
`receipt_forge.Server` argument. `forge_server_session` is one server for the session, from `forge_scenarios` and
`forge_now` (session-scoped overrides). `forge_jws` and `forge_receipt` sign StoreKit 2 data and receipts, at
`forge_now` unless told. A failing test's report shows each of its servers' request log and stderr.
"""

from __future__ import annotations

import json
from typing import Any, Iterator, List

import pytest

from . import jws as _jws
from . import receipts as _receipts
from .server import Server

_SERVERS = pytest.StashKey[List[Server]]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "forge(scenarios=None, now=None, **options): the forge_server fixture's scenarios, clock and other receipt_forge.Server arguments",
    )


@pytest.fixture(scope="session")
def forge_scenarios() -> List[Any]:
    """The scenarios the servers serve (paths or dicts): none unless overridden."""
    return []


@pytest.fixture(scope="session")
def forge_now() -> Any:
    """The servers' clock and what forge_jws and forge_receipt sign at: the wall clock unless overridden."""
    return None


def _track(request: pytest.FixtureRequest, server: Server) -> None:
    request.node.stash.setdefault(_SERVERS, []).append(server)


@pytest.fixture
def forge_server(request: pytest.FixtureRequest, forge_scenarios: List[Any], forge_now: Any) -> Iterator[Server]:
    """A `forge serve` of its own for this test, stopped after it (even when it fails)."""
    options = {"scenarios": forge_scenarios, "now": forge_now}
    marker = request.node.get_closest_marker("forge")
    if marker is not None:
        if marker.args:
            raise pytest.UsageError("the forge marker takes keywords only: @pytest.mark.forge(scenarios=[...], now=...)")
        options.update(marker.kwargs)
    with Server(**options) as server:
        _track(request, server)
        yield server


@pytest.fixture(scope="session")
def forge_server_session(forge_scenarios: List[Any], forge_now: Any) -> Iterator[Server]:
    """One `forge serve` for the whole session: faults, the clock and the log carry over from test to test."""
    with Server(scenarios=forge_scenarios, now=forge_now) as server:
        yield server


@pytest.fixture(autouse=True)
def _forge_session_report(request: pytest.FixtureRequest) -> None:
    # The session server's log belongs in the report of a failing test that used it.
    if "forge_server_session" in request.fixturenames:
        _track(request, request.getfixturevalue("forge_server_session"))


@pytest.fixture
def forge_jws(forge_now: Any):
    """`forge_jws(kind, **options)`: a compact JWS (text), as `receipt_forge.jws.make`, at forge_now unless `now=`."""

    def make(kind: str, **options: Any) -> str:
        if forge_now is not None and "event" not in options:
            options.setdefault("now", forge_now)
        return _jws.make(kind, **options)

    return make


@pytest.fixture
def forge_receipt(forge_now: Any):
    """`forge_receipt(**options)`: a receipt's DER bytes, as `receipt_forge.receipts.make`, at forge_now unless `now=`."""

    def make(**options: Any) -> bytes:
        if forge_now is not None:
            options.setdefault("now", forge_now)
        return _receipts.make(**options)

    return make


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    for number, server in enumerate(item.stash.get(_SERVERS, [])):
        if not server.running:
            continue
        name = f"forge serve {server.base_url}" + (f" ({number + 1})" if number else "")
        try:
            entries = server.log()
            log = "\n".join(json.dumps(entry, sort_keys=True) for entry in entries) or "(no requests)"
        except Exception as error:  # the report must not fail because the server is gone
            log = f"(the request log could not be read: {error})"
        report.sections.append((f"{name}: request log", log))
        stderr = server.stderr().strip()
        if stderr:
            report.sections.append((f"{name}: stderr", stderr))
