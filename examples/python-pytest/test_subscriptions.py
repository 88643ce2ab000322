"""The subscription logic against receipt-forge's stand-in for Apple: the fixtures start `forge serve` with the
customers of conftest.py and stop it after each test."""

import http.server
import json
import threading

import pytest
import receipt_forge

from conftest import CUSTOMER, NOW
from subscriptions import Subscriptions, TryAgainLater


@pytest.fixture
def subscriptions(forge_server):
    return Subscriptions(forge_server.api_client("sandbox"), forge_server.verifier("sandbox"), clock=forge_server.now)


def test_a_purchase_grants_the_subscription(subscriptions, forge_jws, customer_file):
    signed = forge_jws("transaction", spec=customer_file)  # what the app sends: Transaction.jwsRepresentation
    entitlement = subscriptions.purchase(signed)
    assert entitlement["productId"] == "pro.monthly" and entitlement["active"]


def test_the_subscription_lapses_when_the_clock_passes_its_end(subscriptions, forge_server, forge_jws, customer_file):
    ids = forge_server.customer(0)["purchases"][0]
    subscriptions.purchase(forge_jws("transaction", spec=customer_file))
    assert subscriptions.is_active(ids["originalTransactionId"])
    forge_server.advance("P3M")  # past the one renewal the timeline has: the period ended
    assert not subscriptions.is_active(ids["originalTransactionId"])


def test_apple_unavailable_is_retried_by_the_app(subscriptions, forge_server, forge_jws, customer_file):
    forge_server.fault("sandbox/transactionInfo:status=5000001,count=1")
    signed = forge_jws("transaction", spec=customer_file)
    with pytest.raises(TryAgainLater):
        subscriptions.purchase(signed)
    assert subscriptions.purchase(signed)["active"]  # the fault was spent; Apple answers again
    assert [entry["httpStatus"] for entry in forge_server.log() if entry["endpoint"] == "transactionInfo"] == [500, 200]


def test_a_refund_notification_revokes(subscriptions, forge_jws, customer_file):
    refund = forge_jws("notification", spec=customer_file, notification_type="REFUND")
    assert subscriptions.notification(json.dumps({"signedPayload": refund}).encode()) == 200
    assert not any(entitlement["active"] for entitlement in subscriptions.entitlements.values())


def test_a_forged_notification_is_refused(subscriptions):
    assert subscriptions.notification(b'{"signedPayload": "not.a.jws"}') == 400


class Webhook(http.server.ThreadingHTTPServer):
    """The notification route on a real socket: forge serve --notify posts here."""

    def __init__(self, subscriptions):
        self.subscriptions, self.received = subscriptions, threading.Event()
        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/app-store/notifications"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        status = self.server.subscriptions.notification(body)
        self.send_response(status)
        self.end_headers()
        self.server.received.set()

    def log_message(self, *args):
        pass


def test_the_renewal_reaches_the_webhook_when_the_clock_passes_it():
    # A server of its own: its --notify-sandbox (the customer is a sandbox one) names the webhook, which listens first.
    subscriptions = Subscriptions(None, None)
    webhook = Webhook(subscriptions)
    threading.Thread(target=webhook.serve_forever, daemon=True).start()
    try:
        with receipt_forge.Server(scenarios=[CUSTOMER], now=NOW, notify_sandbox=webhook.url) as server:
            subscriptions.verifier, subscriptions.clock = server.verifier("sandbox"), server.now
            server.advance("P1M")  # the renewal of January 15 is due: Apple sends DID_RENEW
            assert webhook.received.wait(30), server.log()
            (entitlement,) = subscriptions.entitlements.values()
            assert entitlement["lastNotification"] == "DID_RENEW"
    finally:
        webhook.shutdown()
