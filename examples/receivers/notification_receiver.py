#!/usr/bin/env python3
"""A webhook for App Store Server Notifications V2 that checks what it receives with Apple's own verifier.

Every POST body must be {"signedPayload": "..."}; the payload is verified with Apple's SignedDataVerifier
(app-store-server-library) under the given root, and so are its nested signedTransactionInfo and
signedRenewalInfo (RESCIND_CONSENT: appData's signedAppTransactionInfo, recorded as appTransactionVerified). Each delivery is appended to --record as one JSON line (verified or not, the type, subtype,
notificationUUID, signedDate, the SHA-256 of the body), then answered as --script says for that delivery (the
last step repeats):

  200, 500, ...  that HTTP status, empty body
  hang           answer nothing, keep the connection open
  reset          close the connection at once, with a TCP reset
  partial        a status line promising 100 bytes, 5 sent, then close
  garbage        bytes that are not HTTP, then close
  redirect       302 to this same path (a circle)
  flood          200 promising a gigabyte, sent until the client hangs up

With --tls-cert and --tls-key it serves HTTPS with that certificate (its issuer is what `forge serve
--notify-ca` trusts). The first line on stdout is `listening http(s)://127.0.0.1:PORT/`.
Usage: notification_receiver.py --root jws-root-g3.pem --bundle-id ID [--environment sandbox|production]
       [--app-apple-id N] [--script 200,500] [--record FILE] [--port 0] [--tls-cert PEM --tls-key PEM]
"""
import argparse
import base64
import hashlib
import http.server
import json
import socket
import ssl
import struct
import sys
import threading
import time

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier


def payload(jws):
    part = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--bundle-id", required=True)
    parser.add_argument("--environment", choices=["sandbox", "production"], default="sandbox")
    parser.add_argument("--app-apple-id", type=int)
    parser.add_argument("--script", default="200")
    parser.add_argument("--record")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    arguments = parser.parse_args()
    with open(arguments.root, "rb") as handle:
        root = x509.load_pem_x509_certificate(handle.read()).public_bytes(serialization.Encoding.DER)
    environment = Environment.SANDBOX if arguments.environment == "sandbox" else Environment.PRODUCTION
    verifier = SignedDataVerifier([root], False, environment, arguments.bundle_id, arguments.app_apple_id)
    steps = arguments.script.split(",")
    lock = threading.Lock()
    count = [0]

    def record(entry):
        if arguments.record:
            with lock, open(arguments.record, "a") as handle:
                handle.write(json.dumps(entry) + "\n")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                step = steps[min(count[0], len(steps) - 1)]
                count[0] += 1
            entry = {"step": step, "sha256": hashlib.sha256(body).hexdigest(), "contentType": self.headers.get("Content-Type")}
            try:
                signed = json.loads(body)["signedPayload"]
                verifier.verify_and_decode_notification(signed)
                decoded = payload(signed)
                data = decoded.get("data") or {}
                if "signedTransactionInfo" in data:
                    verifier.verify_and_decode_signed_transaction(data["signedTransactionInfo"])
                if "signedRenewalInfo" in data:
                    verifier.verify_and_decode_renewal_info(data["signedRenewalInfo"])
                app_data = decoded.get("appData") or {}  # RESCIND_CONSENT: the app's AppTransaction instead of data
                if "signedAppTransactionInfo" in app_data:
                    verifier.verify_and_decode_app_transaction(app_data["signedAppTransactionInfo"])
                    entry.update(appTransactionVerified=True)
                entry.update(verified=True, notificationType=decoded.get("notificationType"), subtype=decoded.get("subtype"),
                             notificationUUID=decoded.get("notificationUUID"), signedDate=decoded.get("signedDate"),
                             members=sorted(body_keys(body)))
            except Exception as error:  # the record says why; the answer still follows the script
                entry.update(verified=False, error=f"{type(error).__name__}: {getattr(error, 'status', error)}")
            record(entry)
            self.answer(step)

        def answer(self, step):
            if step == "hang":
                time.sleep(3600)
            elif step == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
            elif step == "partial":
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
            elif step == "garbage":
                self.wfile.write(b"this is not HTTP at all\r\n\r\n")
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
            elif step == "flood":
                self.send_response(200)
                self.send_header("Content-Length", str(1 << 30))
                self.end_headers()
                chunk = b"x" * (1 << 20)
                try:
                    for _ in range(1 << 10):
                        self.wfile.write(chunk)
                except OSError:
                    pass
                self.close_connection = True
            elif step == "redirect":
                self.send_response(302)
                self.send_header("Location", self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self.send_response(int(step))
                self.send_header("Content-Length", "0")
                self.end_headers()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", arguments.port), Handler)
    server.daemon_threads = True
    scheme = "http"
    if arguments.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(arguments.tls_cert, arguments.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    print(f"listening {scheme}://127.0.0.1:{server.server_address[1]}/", flush=True)
    server.serve_forever()


def body_keys(body):
    return json.loads(body).keys()


if __name__ == "__main__":
    sys.exit(main())
