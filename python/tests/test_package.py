"""receipt_forge's own tests: the fixtures, the clock, faults, the errors, and no server left behind by a test that
fails or a run that is interrupted or killed."""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest
import receipt_forge
from receipt_forge import ForgeError, Server

NOW = "2025-01-01T00:00:00Z"
CUSTOMER = {
    "preset": "sandbox",
    "bundleId": "com.example.pkg",
    "now": NOW,
    "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-12-15T00:00:00Z", "period": "P1M", "renewals": 1}],
}


def _plugin_arguments():
    """`-p receipt_forge.pytest_plugin` for a pytest run inside a test, unless the installed wheel's entry point loads it."""
    from importlib.metadata import distributions

    installed = any(point.group == "pytest11" and point.value == "receipt_forge.pytest_plugin" for d in distributions() for point in d.entry_points)
    return [] if installed else ["-p", "receipt_forge.pytest_plugin"]


PLUGIN = _plugin_arguments()


def ended(pid, within=20.0):
    """Whether `pid` ends (or is a zombie no one reaps) within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except (FileNotFoundError, IndexError):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.forge(scenarios=[CUSTOMER], now=NOW)
def test_fixture_serves_the_marker_scenario_to_apples_client(forge_server):
    ids = forge_server.customer(0)
    assert ids["bundleId"] == "com.example.pkg" and ids["environment"] == "Sandbox"
    purchase = ids["purchases"][0]
    client = forge_server.api_client("sandbox")
    info = client.get_transaction_info(purchase["latestTransactionId"])
    transaction = forge_server.verifier("sandbox").verify_and_decode_signed_transaction(info.signedTransactionInfo)
    assert transaction.transactionId == purchase["latestTransactionId"] and transaction.originalTransactionId == purchase["originalTransactionId"]
    assert forge_server.root("jws").startswith(b"-----BEGIN CERTIFICATE-----") and forge_server.key.startswith(b"-----BEGIN PRIVATE KEY-----")


@pytest.mark.forge(scenarios=[CUSTOMER], now=NOW)
def test_async_client(forge_server):
    import asyncio

    pytest.importorskip("httpx", reason="Apple's async client needs httpx")

    async def call():
        client = forge_server.api_client("sandbox", asynchronous=True)
        try:
            return await client.get_transaction_info(forge_server.customer(0)["purchases"][0]["latestTransactionId"])
        finally:
            await client.async_close()

    assert asyncio.run(call()).signedTransactionInfo


@pytest.mark.forge(scenarios=[CUSTOMER], now=NOW)
def test_clock(forge_server):
    assert forge_server.now().isoformat() == "2025-01-01T00:00:00+00:00"
    assert forge_server.advance(3600).isoformat() == "2025-01-01T01:00:00+00:00"
    assert forge_server.advance("P1M").isoformat() == "2025-02-01T01:00:00+00:00"
    assert forge_server.set_now("2025-03-01T00:00:00Z").isoformat() == "2025-03-01T00:00:00+00:00"
    with pytest.raises(ForgeError) as refused:
        forge_server.set_now("2024-01-01T00:00:00Z")
    assert refused.value.exit_code == 400 and "only moves forward" in refused.value.message


@pytest.mark.forge(scenarios=[CUSTOMER], now=NOW, faults=["sandbox/transactionInfo:status=4290000,count=1"])
def test_faults(forge_server):
    from appstoreserverlibrary.api_client import APIException

    client = forge_server.api_client("sandbox")
    latest = forge_server.customer(0)["purchases"][0]["latestTransactionId"]
    with pytest.raises(APIException) as limited:
        client.get_transaction_info(latest)
    assert limited.value.raw_api_error == 4290000
    forge_server.fault("sandbox/transactionInfo:status=5000001,count=1")
    with pytest.raises(APIException) as failed:
        client.get_transaction_info(latest)
    assert failed.value.raw_api_error == 5000001
    assert client.get_transaction_info(latest).signedTransactionInfo
    assert [entry["httpStatus"] for entry in forge_server.log() if entry["endpoint"] == "transactionInfo"] == [429, 500, 200]
    forge_server.clear_log()
    assert forge_server.log() == []


def test_overridable_fixtures_and_signing(pytester):
    pytester.makeconftest(
        f"""
        import json, pytest
        @pytest.fixture(scope="session")
        def forge_scenarios():
            return [json.loads({json.dumps(CUSTOMER)!r})]
        @pytest.fixture(scope="session")
        def forge_now():
            return "{NOW}"
        """
    )
    pytester.makepyfile(
        """
        def test_scenarios(forge_server, forge_server_session):
            assert forge_server.customer(0)["bundleId"] == "com.example.pkg"
            assert forge_server_session.customer(0)["bundleId"] == "com.example.pkg"
            assert forge_server.now().isoformat() == "2025-01-01T00:00:00+00:00"

        def test_signing(forge_jws, forge_receipt):
            jws = forge_jws("transaction", product="pro.monthly")
            assert jws.count(".") == 2 and not jws.endswith("\\n")
            assert forge_jws("notification", notification_type="DID_RENEW", product="pro.monthly").count(".") == 2
            assert forge_receipt(product="lifetime")[:1] == b"\\x30"
        """
    )
    assert pytester.runpytest("-p", "no:cacheprovider", *PLUGIN).ret == 0


def test_a_failing_test_shows_the_log_and_leaves_no_server(pytester, tmp_path):
    pids = tmp_path / "pids"
    pytester.makepyfile(
        f"""
        import urllib.request
        import pytest
        @pytest.mark.forge(now="{NOW}", auth="none")
        def test_fails(forge_server):
            open({str(pids)!r}, "a").write(str(forge_server.pid) + "\\n")
            urllib.request.urlopen(forge_server.url("sandbox", "verifyReceipt"), data=b"{{}}").read()
            assert False, "the handler broke"
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", *PLUGIN)
    assert result.ret == 1
    output = result.stdout.str()
    assert "request log" in output and '"endpoint": "sandbox"' in output and "the handler broke" in output
    (pid,) = [int(line) for line in pids.read_text().split()]
    assert ended(pid, within=5)


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_or_killed_run_leaves_no_server(tmp_path, how):
    pids = tmp_path / "pids"
    (tmp_path / "test_hangs.py").write_text(
        textwrap.dedent(
            f"""
            import time
            def test_hangs(forge_server):
                open({str(pids)!r}, "w").write(str(forge_server.pid))
                time.sleep(600)
            """
        )
    )
    run = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PLUGIN, str(tmp_path)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not (pids.exists() and pids.read_text()) and time.monotonic() < deadline:
            assert run.poll() is None, run.stdout.read().decode()
            time.sleep(0.05)
        pid = int(pids.read_text())
        run.send_signal(how)
        run.wait(30)
        assert ended(pid), f"forge serve {pid} outlived pytest after signal {how}"
    finally:
        if run.poll() is None:
            run.kill()


def test_errors_are_one_exception_with_forges_message_and_code(tmp_path, monkeypatch):
    bad = tmp_path / "bad.json"
    bad.write_text('{"purchases": [{"productId": "p", "period": "P1M"}]}')
    with pytest.raises(ForgeError) as refused:
        Server([bad], auth="none")
    assert refused.value.exit_code == 65 and "needs 'now'" in refused.value.message
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        with pytest.raises(ForgeError) as busy:
            Server(listen=f"127.0.0.1:{taken.getsockname()[1]}", auth="none")
        assert busy.value.exit_code == 69 and "address already in use" in busy.value.message
    finally:
        taken.close()
    with pytest.raises(ForgeError) as usage:
        receipt_forge.jws.make("transaction", product="p", renewals=-1)
    assert usage.value.exit_code == 64 and usage.value.message.startswith("forge: error:")
    monkeypatch.setenv(receipt_forge.BINARY_VARIABLE, str(tmp_path / "no-forge"))
    with pytest.raises(ForgeError) as missing:
        receipt_forge.forge("--version")
    assert missing.value.exit_code == 127 and "no-forge" in missing.value.message


def test_notify_posts_a_signed_notification_and_says_how_it_ended():
    import http.server
    import threading

    bodies = []

    class Webhook(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200 if len(bodies) == 1 else 500)
            self.end_headers()

        def log_message(self, *args):
            pass

    webhook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Webhook)
    threading.Thread(target=webhook.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{webhook.server_address[1]}/apple"
        delivered = receipt_forge.notify(url, notification_type="DID_RENEW", product="pro.monthly", now=NOW)
        assert delivered["sendAttemptResult"] == "SUCCESS" and delivered["notificationType"] == "DID_RENEW"
        assert bodies[0]["signedPayload"].count(".") == 2
        refused = receipt_forge.notify(url, notification_type="TEST")
        assert refused["sendAttemptResult"] == "UNSUCCESSFUL_HTTP_RESPONSE_CODE" and refused["httpStatus"] == 500
    finally:
        webhook.shutdown()
    assert receipt_forge.forge("--version").strip()
