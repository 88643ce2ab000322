#!/usr/bin/env python3
"""Apple's own App Store Server API client (app-store-server-library) pointed at `forge serve`.

Calls the server through `AppStoreServerAPIClient` unmodified but for its base URL (server-api-facts §1.5:
`client._base_url`), or not modified at all (no BASE_URL: Apple's own URL for the environment, the host name
resolved to the server by `--resolve`, TLS trusted through the environment as below), and verifies every signed
field it gets back with Apple's `SignedDataVerifier` under the TEST JWS root. The bearer token is signed by the key `forge ca api-key` made (`--key`, `--key-id`,
`--issuer-id`, as `forge serve --api-key KEY_ID=FILE --issuer-id ID` takes them), or by a throwaway EC P-256
key when the server runs with `--no-auth`.

    server_api_client.py [BASE_URL] --bundle-id ID [--environment sandbox|production|local-testing] [--app-apple-id N]
                         [--root PEM] [--key P8 --key-id KID --issuer-id ID] [--async]
                         [--resolve HOST=ADDRESS:PORT ...] [--verify-environment sandbox|production] < calls.json

With `--async` every call goes through the library's httpx client, `AsyncAppStoreServerAPIClient`, awaited on
one event loop: the same calls, the same results.

BASE_URL is what `forge serve` prints without the path (http://127.0.0.1:8080); the sandbox is reached at
BASE_URL/sandbox, local testing at BASE_URL/local-testing. Without BASE_URL the client keeps Apple's URL
(https://api.storekit.apple.com, https://api.storekit-sandbox.apple.com, https://local-testing-base-url) and
`--resolve HOST=127.0.0.1:PORT` (repeatable) sends this process's connections to HOST, on any port, to that
address and port, as an /etc/hosts line would (plus the port: a test cannot bind 443). Against `forge serve --tls`
the client then verifies the serving certificate for Apple's host name; it trusts what the environment says, as it
would in production: requests (the sync client) reads REQUESTS_CA_BUNDLE, httpx 0.28 (the async one) SSL_CERT_FILE.
The signed fields are verified for --verify-environment (default: --environment; sandbox for local-testing, whose
verifier would skip the signatures). calls.json is a JSON list of calls, each an object:

    {"call": "info", "transactionId": "..."}
    {"call": "history", "transactionId": "...", "revision": "...", "sort": "ASCENDING|DESCENDING",
     "productIds": [...], "productTypes": ["AUTO_RENEWABLE", ...], "startDate": MS, "endDate": MS,
     "revoked": true|false, "inAppOwnershipType": "PURCHASED|FAMILY_SHARED", "subscriptionGroupIdentifiers": [...]}
    {"call": "statuses", "transactionId": "...", "status": [1, 2, ...]}
    {"call": "refunds", "transactionId": "...", "revision": "..."}
    {"call": "appTransaction", "transactionId": "..."}
    {"call": "finish", "transactionId": "..."}
    {"call": "consumptionV1", "transactionId": "...", "request": {ConsumptionRequestV1's members, integers as Apple codes them}}
    {"call": "consumption", "transactionId": "...", "request": {"customerConsented": true, "sampleContentProvided": false,
     "deliveryStatus": "DELIVERED", "consumptionPercentage": N, "refundPreference": "DECLINE"}}
    {"call": "raw", "method": "GET", "path": "/inApps/...", "query": {...}, "body": JSON or "data": "text", "contentType": "..."}
     (bypasses the library's enums and validators)

The Retention Messaging API (its 14 methods; identifiers are UUIDs):

    {"call": "uploadImage", "imageIdentifier": "...", "width": 3840, "height": 160, "alpha": false, "imageSize": "FULL_SIZE|BULLET_POINT"}
     (a PNG of that size made here: RGB, or RGBA with "alpha")
    {"call": "deleteImage", "imageIdentifier": "..."}             {"call": "imageList"}
    {"call": "uploadMessage", "messageIdentifier": "...", "header": "...", "body": "...",
     "image": {"imageIdentifier": "...", "altText": "..."}, "headerPosition": "ABOVE_BODY|ABOVE_IMAGE",
     "bulletPoints": [{"text": "...", "imageIdentifier": "...", "altText": "..."}]}
    {"call": "deleteMessage", "messageIdentifier": "..."}         {"call": "messageList"}
    {"call": "configureDefaultMessage", "productId": "...", "locale": "en-US", "messageIdentifier": "..."}
    {"call": "deleteDefaultMessage", "productId": "...", "locale": "..."}
    {"call": "defaultMessage", "productId": "...", "locale": "..."}
    {"call": "configureRealtimeURL", "realtimeURL": "..."}  {"call": "deleteRealtimeURL"}  {"call": "realtimeURL"}
    {"call": "initiatePerformanceTest", "originalTransactionId": "..."}
    {"call": "performanceTestResults", "requestId": "...", "waitSeconds": N}   (polls while PENDING, at most N s)

Prints a JSON list with one result per call: {"ok": true, ...the answer, every JWS replaced by its verified
payload...} or {"ok": false, "httpStatus": N, "apiError": CODE or null, "errorMessage": "..."}. A signed
field the verifier refuses makes the whole run fail (exit 1) with the verifier's status on stderr.
Requires the virtualenv of app-store-server-library (`.oracles/asl`).
"""
import argparse
import asyncio
import base64
import json
import socket
import struct
import sys
import time
import uuid
import zlib

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography import x509

from appstoreserverlibrary.api_client import APIException, AppStoreServerAPIClient, AsyncAppStoreServerAPIClient, GetTransactionHistoryVersion
from appstoreserverlibrary.models.AccountTenure import AccountTenure
from appstoreserverlibrary.models.ConsumptionRequest import ConsumptionRequest
from appstoreserverlibrary.models.ConsumptionRequestV1 import ConsumptionRequestV1
from appstoreserverlibrary.models.ConsumptionStatus import ConsumptionStatus
from appstoreserverlibrary.models.DeliveryStatusV1 import DeliveryStatusV1
from appstoreserverlibrary.models.LifetimeDollarsPurchased import LifetimeDollarsPurchased
from appstoreserverlibrary.models.LifetimeDollarsRefunded import LifetimeDollarsRefunded
from appstoreserverlibrary.models.Platform import Platform
from appstoreserverlibrary.models.PlayTime import PlayTime
from appstoreserverlibrary.models.UserStatus import UserStatus
from appstoreserverlibrary.models.DeliveryStatus import DeliveryStatus
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.RefundPreference import RefundPreference
from appstoreserverlibrary.models.InAppOwnershipType import InAppOwnershipType
from appstoreserverlibrary.models.Status import Status
from appstoreserverlibrary.models.ExtendReasonCode import ExtendReasonCode
from appstoreserverlibrary.models.ExtendRenewalDateRequest import ExtendRenewalDateRequest
from appstoreserverlibrary.models.MassExtendRenewalDateRequest import MassExtendRenewalDateRequest
from appstoreserverlibrary.models.BulletPoint import BulletPoint
from appstoreserverlibrary.models.DefaultConfigurationRequest import DefaultConfigurationRequest
from appstoreserverlibrary.models.HeaderPosition import HeaderPosition
from appstoreserverlibrary.models.ImageSize import ImageSize
from appstoreserverlibrary.models.PerformanceTestRequest import PerformanceTestRequest
from appstoreserverlibrary.models.RealtimeUrlRequest import RealtimeUrlRequest
from appstoreserverlibrary.models.UploadMessageImage import UploadMessageImage
from appstoreserverlibrary.models.UploadMessageRequestBody import UploadMessageRequestBody
from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2
from appstoreserverlibrary.models.Subtype import Subtype
from appstoreserverlibrary.models.UpdateAppAccountTokenRequest import UpdateAppAccountTokenRequest
from appstoreserverlibrary.models.TransactionHistoryRequest import Order, ProductType, TransactionHistoryRequest
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException


def payload(jws):
    """The payload of a JWS the verifier has accepted, as the server sent it (every member, Apple's names)."""
    part = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


class Awaiting:
    """The async client behind the sync client's face: each method call is awaited on one event loop, so the
    driver's calls run unchanged through httpx."""

    def __init__(self, client, loop):
        self._client, self._loop = client, loop

    def __getattr__(self, name):
        method = getattr(self._client, name)
        return lambda *arguments: self._loop.run_until_complete(method(*arguments))

    def close(self):
        self._loop.run_until_complete(self._client.async_close())
        self._loop.close()


ENVIRONMENTS = {"sandbox": Environment.SANDBOX, "production": Environment.PRODUCTION, "local-testing": Environment.LOCAL_TESTING}
PREFIXES = {"sandbox": "/sandbox", "production": "", "local-testing": "/local-testing"}


def resolve(overrides):
    """Sends connections to each HOST to its (ADDRESS, PORT), as an /etc/hosts line (HOST → ADDRESS) and a
    port-redirect rule (ADDRESS:443 → ADDRESS:PORT, what iptables' REDIRECT does) would, in this process only.
    Both clients look names up through socket.getaddrinfo (urllib3 directly, httpx's anyio through asyncio's
    resolver thread) and connect through socket.socket.connect, so nothing of the library is touched; TLS still
    checks the certificate for HOST."""
    lookup, connect, redirects = socket.getaddrinfo, socket.socket.connect, {}

    def getaddrinfo(host, port, *arguments, **options):
        name = host.decode("ascii", "replace") if isinstance(host, bytes) else host
        if isinstance(name, str) and name.lower() in overrides:
            address, target = overrides[name.lower()]
            answers = lookup(address, port, *arguments, **options)
            for *_, sockaddr in answers:
                redirects[sockaddr[:2]] = (sockaddr[0], target)
            return answers
        return lookup(host, port, *arguments, **options)

    def redirected(self, address):
        return connect(self, redirects.get(address[:2], address) if isinstance(address, tuple) else address)

    socket.getaddrinfo = getaddrinfo
    socket.socket.connect = redirected


def resolution(text):
    """HOST=ADDRESS:PORT, for --resolve."""
    host, _, target = text.partition("=")
    address, _, port = target.rpartition(":")
    if not host or not address or not port.isdigit():
        raise argparse.ArgumentTypeError(f"--resolve takes HOST=ADDRESS:PORT, not {text!r}")
    return host.lower(), (address.strip("[]"), int(port))


class Driver:
    def __init__(self, base_url, bundle_id, environment, app_apple_id, root_pem, key_file=None, key_id="FORGETEST1",
                 issuer_id="00000000-0000-0000-0000-000000000000", asynchronous=False, verify_environment=None):
        if key_file:
            with open(key_file, "rb") as handle:
                key = handle.read()
        else:
            key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        # The client's environment; the verifier's is the stores' (a LOCAL_TESTING verifier checks no signature).
        self.environment = ENVIRONMENTS[verify_environment or ("sandbox" if environment == "local-testing" else environment)]
        client = (AsyncAppStoreServerAPIClient if asynchronous else AppStoreServerAPIClient)(key, key_id, issuer_id, bundle_id, ENVIRONMENTS[environment])
        if base_url is not None:
            client._base_url = base_url.rstrip("/") + PREFIXES[environment]
        self.client = Awaiting(client, asyncio.new_event_loop()) if asynchronous else client
        with open(root_pem, "rb") as handle:
            root = x509.load_pem_x509_certificate(handle.read()).public_bytes(serialization.Encoding.DER)
        self.verifier = SignedDataVerifier([root], False, self.environment, bundle_id, app_apple_id)

    def transaction(self, jws):
        self.verifier.verify_and_decode_signed_transaction(jws)
        return payload(jws)

    def renewal(self, jws):
        self.verifier.verify_and_decode_renewal_info(jws)
        return payload(jws)

    def info(self, call):
        response = self.client.get_transaction_info(call["transactionId"])
        return {"signedTransactionInfo": self.transaction(response.signedTransactionInfo)}

    def history(self, call):
        request = TransactionHistoryRequest(
            startDate=call.get("startDate"), endDate=call.get("endDate"), productIds=call.get("productIds"),
            productTypes=[ProductType(t) for t in call["productTypes"]] if "productTypes" in call else None,
            sort=Order(call["sort"]) if "sort" in call else None, revoked=call.get("revoked"),
            inAppOwnershipType=InAppOwnershipType(call["inAppOwnershipType"]) if "inAppOwnershipType" in call else None,
            subscriptionGroupIdentifiers=call.get("subscriptionGroupIdentifiers"))
        version = GetTransactionHistoryVersion.V1 if call.get("version") == 1 else GetTransactionHistoryVersion.V2
        response = self.client.get_transaction_history(call["transactionId"], call.get("revision"), request, version)
        return {
            "revision": response.revision, "hasMore": response.hasMore, "bundleId": response.bundleId,
            "appAppleId": response.appAppleId, "environment": response.rawEnvironment,
            "signedTransactions": [self.transaction(jws) for jws in response.signedTransactions or []],
        }

    def statuses(self, call):
        wanted = [Status(s) for s in call["status"]] if "status" in call else None
        response = self.client.get_all_subscription_statuses(call["transactionId"], wanted)
        data = []
        for group in response.data or []:
            data.append({
                "subscriptionGroupIdentifier": group.subscriptionGroupIdentifier,
                "lastTransactions": [{
                    "status": item.rawStatus, "originalTransactionId": item.originalTransactionId,
                    "signedTransactionInfo": self.transaction(item.signedTransactionInfo),
                    "signedRenewalInfo": self.renewal(item.signedRenewalInfo),
                } for item in group.lastTransactions or []],
            })
        return {"environment": response.rawEnvironment, "bundleId": response.bundleId, "appAppleId": response.appAppleId, "data": data}

    def refunds(self, call):
        response = self.client.get_refund_history(call["transactionId"], call.get("revision"))
        return {
            "revision": response.revision, "hasMore": response.hasMore,
            "signedTransactions": [self.transaction(jws) for jws in response.signedTransactions or []],
        }

    def appTransaction(self, call):
        response = self.client.get_app_transaction_info(call["transactionId"])
        self.verifier.verify_and_decode_app_transaction(response.signedAppTransactionInfo)
        return {"signedAppTransactionInfo": payload(response.signedAppTransactionInfo)}

    def consumption(self, call):
        body = call["request"]
        request = ConsumptionRequest(
            customerConsented=body["customerConsented"], sampleContentProvided=body["sampleContentProvided"],
            deliveryStatus=DeliveryStatus(body["deliveryStatus"]), consumptionPercentage=body.get("consumptionPercentage"),
            refundPreference=RefundPreference(body["refundPreference"]) if "refundPreference" in body else None)
        self.client.send_consumption_information(call["transactionId"], request)
        return {}

    def consumptionV1(self, call):
        body = call["request"]
        request = ConsumptionRequestV1(
            customerConsented=body["customerConsented"], consumptionStatus=ConsumptionStatus(body["consumptionStatus"]),
            platform=Platform(body["platform"]), sampleContentProvided=body["sampleContentProvided"],
            deliveryStatus=DeliveryStatusV1(body["deliveryStatus"]), appAccountToken=body["appAccountToken"],
            accountTenure=AccountTenure(body["accountTenure"]), playTime=PlayTime(body["playTime"]),
            lifetimeDollarsRefunded=LifetimeDollarsRefunded(body["lifetimeDollarsRefunded"]),
            lifetimeDollarsPurchased=LifetimeDollarsPurchased(body["lifetimeDollarsPurchased"]), userStatus=UserStatus(body["userStatus"]))
        self.client.send_consumption_data(call["transactionId"], request)
        return {}

    def finish(self, call):
        self.client.finish_transaction(call["transactionId"])
        return {}

    def lookUpOrder(self, call):
        response = self.client.look_up_order_id(call["orderId"])
        return {"status": response.rawStatus, "signedTransactions": [self.transaction(jws) for jws in response.signedTransactions or []]}

    def setAppAccountToken(self, call):
        self.client.set_app_account_token(call["transactionId"], UpdateAppAccountTokenRequest(appAccountToken=call["appAccountToken"]))
        return {}

    def extend(self, call):
        request = ExtendRenewalDateRequest(
            extendByDays=call["extendByDays"], extendReasonCode=ExtendReasonCode(call.get("extendReasonCode", 0)),
            requestIdentifier=call["requestIdentifier"])
        response = self.client.extend_subscription_renewal_date(call["transactionId"], request)
        return {"originalTransactionId": response.originalTransactionId, "webOrderLineItemId": response.webOrderLineItemId,
                "success": response.success, "effectiveDate": response.effectiveDate}

    def massExtend(self, call):
        request = MassExtendRenewalDateRequest(
            extendByDays=call["extendByDays"], extendReasonCode=ExtendReasonCode(call.get("extendReasonCode", 0)),
            requestIdentifier=call["requestIdentifier"], storefrontCountryCodes=call.get("storefrontCountryCodes"), productId=call["productId"])
        response = self.client.extend_renewal_date_for_all_active_subscribers(request)
        return {"requestIdentifier": response.requestIdentifier}

    def massExtensionStatus(self, call):
        response = self.client.get_status_of_subscription_renewal_date_extensions(call["requestIdentifier"], call["productId"])
        return {"requestIdentifier": response.requestIdentifier, "complete": response.complete, "completeDate": response.completeDate,
                "succeededCount": response.succeededCount, "failedCount": response.failedCount}

    def notification(self, jws):
        self.verifier.verify_and_decode_notification(jws)
        decoded = payload(jws)
        data = decoded.get("data") or {}
        for field, check in (("signedTransactionInfo", self.transaction), ("signedRenewalInfo", self.renewal)):
            if field in data:
                data[field] = check(data[field])
        return decoded

    def requestTest(self, call):
        return {"testNotificationToken": self.client.request_test_notification().testNotificationToken}

    def testStatus(self, call):
        response = self.client.get_test_notification_status(call["token"])
        return {"signedPayload": self.notification(response.signedPayload), "sendAttempts": len(response.sendAttempts or [])}

    def notificationHistory(self, call):
        request = NotificationHistoryRequest(
            startDate=call["startDate"], endDate=call["endDate"],
            notificationType=NotificationTypeV2(call["notificationType"]) if "notificationType" in call else None,
            notificationSubtype=Subtype(call["notificationSubtype"]) if "notificationSubtype" in call else None,
            transactionId=call.get("transactionId"), onlyFailures=call.get("onlyFailures"))
        response = self.client.get_notification_history(call.get("paginationToken"), request)
        return {"hasMore": response.hasMore, "paginationToken": response.paginationToken,
                "notifications": [self.notification(item.signedPayload) for item in response.notificationHistory or []]}

    # The Retention Messaging API.

    @staticmethod
    def png(width, height, alpha):
        # One colour, filter 0 on every row: small whatever the size.
        channels = 4 if alpha else 3
        rows = (b"\x00" + b"\x80" * (width * channels)) * height

        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

        header = struct.pack(">IIBBBBB", width, height, 8, 6 if alpha else 2, 0, 0, 0)
        return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")

    def uploadImage(self, call):
        image = self.png(call.get("width", 3840), call.get("height", 160), call.get("alpha", False))
        size = ImageSize(call["imageSize"]) if "imageSize" in call else None
        self.client.upload_image(uuid.UUID(call["imageIdentifier"]), image, size)
        return {}

    def deleteImage(self, call):
        self.client.delete_image(uuid.UUID(call["imageIdentifier"]))
        return {}

    def imageList(self, call):
        response = self.client.get_image_list()
        return {"imageIdentifiers": [{"imageIdentifier": str(item.imageIdentifier), "imageState": item.rawImageState,
                                      "imageSize": item.rawImageSize} for item in response.imageIdentifiers or []]}

    def uploadMessage(self, call):
        image = call.get("image")
        body = UploadMessageRequestBody(
            header=call["header"], body=call["body"],
            image=UploadMessageImage(imageIdentifier=uuid.UUID(image["imageIdentifier"]), altText=image["altText"]) if image else None,
            headerPosition=HeaderPosition(call["headerPosition"]) if "headerPosition" in call else None,
            bulletPoints=[BulletPoint(text=point["text"], imageIdentifier=uuid.UUID(point["imageIdentifier"]), altText=point["altText"])
                          for point in call["bulletPoints"]] if "bulletPoints" in call else None)
        self.client.upload_message(uuid.UUID(call["messageIdentifier"]), body)
        return {}

    def deleteMessage(self, call):
        self.client.delete_message(uuid.UUID(call["messageIdentifier"]))
        return {}

    def messageList(self, call):
        response = self.client.get_message_list()
        return {"messageIdentifiers": [{"messageIdentifier": str(item.messageIdentifier), "messageState": item.rawMessageState}
                                       for item in response.messageIdentifiers or []]}

    def configureDefaultMessage(self, call):
        request = DefaultConfigurationRequest(messageIdentifier=uuid.UUID(call["messageIdentifier"]))
        self.client.configure_default_message(call["productId"], call["locale"], request)
        return {}

    def deleteDefaultMessage(self, call):
        self.client.delete_default_message(call["productId"], call["locale"])
        return {}

    def defaultMessage(self, call):
        response = self.client.get_default_message(call["productId"], call["locale"])
        return {"messageIdentifier": str(response.messageIdentifier)}

    def configureRealtimeURL(self, call):
        self.client.configure_realtime_url(RealtimeUrlRequest(realtimeURL=call["realtimeURL"]))
        return {}

    def deleteRealtimeURL(self, call):
        self.client.delete_realtime_url()
        return {}

    def realtimeURL(self, call):
        return {"realtimeURL": self.client.get_realtime_url().realtimeURL}

    @staticmethod
    def config(config):
        return {"maxConcurrentRequests": config.maxConcurrentRequests, "totalRequests": config.totalRequests,
                "totalDuration": config.totalDuration, "responseTimeThreshold": config.responseTimeThreshold,
                "successRateThreshold": config.successRateThreshold}

    def initiatePerformanceTest(self, call):
        response = self.client.initiate_performance_test(PerformanceTestRequest(originalTransactionId=call["originalTransactionId"]))
        return {"requestId": response.requestId, "config": self.config(response.config)}

    def performanceTestResults(self, call):
        deadline = time.monotonic() + call.get("waitSeconds", 0)
        while True:
            response = self.client.get_performance_test_results(call["requestId"])
            if response.rawResult != "PENDING" or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        times = response.responseTimes
        return {"config": self.config(response.config), "target": response.target, "result": response.rawResult,
                "successRate": response.successRate, "numPending": response.numPending,
                "responseTimes": {"average": times.average, "p50": times.p50, "p90": times.p90, "p95": times.p95, "p99": times.p99} if times else None,
                "failures": response.rawFailures}

    def raw(self, call):
        # The library's own request path, for values its enums cannot express (an unknown sort, a bad status…).
        body = call["data"].encode() if "data" in call else json.dumps(call["body"]).encode() if "body" in call else None
        self.client._make_request(call["path"], call.get("method", "GET"), call.get("query", {}), body, None, call.get("contentType", "application/json"))
        return {}

    def run(self, call):
        try:
            result = getattr(self, call["call"])(call)
            result["ok"] = True
            return result
        except APIException as error:
            return {"ok": False, "httpStatus": error.http_status_code, "apiError": error.raw_api_error, "errorMessage": error.error_message}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base_url", nargs="?", help="forge serve's base URL; without it, Apple's URL for --environment (with --resolve)")
    parser.add_argument("--bundle-id", required=True)
    parser.add_argument("--environment", choices=list(ENVIRONMENTS), default="sandbox")
    parser.add_argument("--verify-environment", choices=["sandbox", "production"], help="the signed fields' environment")
    parser.add_argument("--resolve", type=resolution, action="append", default=[], metavar="HOST=ADDRESS:PORT",
                        help="connect to ADDRESS:PORT for HOST, as /etc/hosts would (repeatable)")
    parser.add_argument("--app-apple-id", type=int)
    parser.add_argument("--root", default="Certificates/jws/jws-root-g3.pem", help="the TEST JWS root (`forge ca export` writes it)")
    parser.add_argument("--key", help="the .p8 of `forge ca api-key` (default: a throwaway key, for --no-auth)")
    parser.add_argument("--key-id", default="FORGETEST1")
    parser.add_argument("--issuer-id", default="00000000-0000-0000-0000-000000000000")
    parser.add_argument("--async", dest="asynchronous", action="store_true", help="use AsyncAppStoreServerAPIClient (httpx)")
    arguments = parser.parse_args()
    if arguments.resolve:
        resolve(dict(arguments.resolve))
    driver = Driver(arguments.base_url, arguments.bundle_id, arguments.environment, arguments.app_apple_id, arguments.root,
                    arguments.key, arguments.key_id, arguments.issuer_id, arguments.asynchronous, arguments.verify_environment)
    try:
        results = [driver.run(call) for call in json.load(sys.stdin)]
    except VerificationException as error:
        print(f"a signed field failed Apple's verifier: {error.status}", file=sys.stderr)
        return 1
    finally:
        if isinstance(driver.client, Awaiting):
            driver.client.close()
    json.dump(results, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
