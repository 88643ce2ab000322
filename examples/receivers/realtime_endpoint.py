#!/usr/bin/env python3
"""A Retention Messaging endpoint (Get Retention Message) that checks every request with Apple's own verifier.

Each POST body must be {"signedPayload": "..."}, a realtime request verified with Apple's SignedDataVerifier
(verify_and_decode_realtime_request) under the given root; one JSON line per request goes to --record
({verified, requestIdentifier, error}). The answer follows --answer:

  message      {"message": {"messageIdentifier": UUID}}, Apple's RealtimeResponseBody
  both         message and alternateProduct together (not a RealtimeResponseBody)
  slow:MS      a message after MS milliseconds
  500          HTTP 500

The first line on stdout is `listening http://127.0.0.1:PORT/`.
Usage: realtime_endpoint.py --root jws-root-g3.pem --bundle-id ID [--environment sandbox|production]
       [--app-apple-id N] [--answer message] [--record FILE]
"""
import argparse
import http.server
import json
import sys
import threading
import time

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier

MESSAGE = {"messageIdentifier": "a1b2c3d4-0000-4000-8000-000000000001"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--bundle-id", required=True)
    parser.add_argument("--environment", choices=["sandbox", "production"], default="sandbox")
    parser.add_argument("--app-apple-id", type=int)
    parser.add_argument("--answer", default="message")
    parser.add_argument("--record")
    arguments = parser.parse_args()
    with open(arguments.root, "rb") as handle:
        root = x509.load_pem_x509_certificate(handle.read()).public_bytes(serialization.Encoding.DER)
    environment = Environment.SANDBOX if arguments.environment == "sandbox" else Environment.PRODUCTION
    verifier = SignedDataVerifier([root], False, environment, arguments.bundle_id, arguments.app_apple_id)
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            entry = {}
            try:
                decoded = verifier.verify_and_decode_realtime_request(json.loads(body)["signedPayload"])
                entry.update(verified=True, requestIdentifier=str(decoded.requestIdentifier))
            except Exception as error:
                entry.update(verified=False, error=f"{type(error).__name__}: {getattr(error, 'status', error)}")
            if arguments.record:
                with lock, open(arguments.record, "a") as handle:
                    handle.write(json.dumps(entry) + "\n")
            answer = arguments.answer
            if answer == "500":
                self.reply(500, b"")
                return
            if answer.startswith("slow:"):
                time.sleep(int(answer[5:]) / 1000)
            content = {"message": MESSAGE}
            if answer == "both":
                content["alternateProduct"] = {"messageIdentifier": MESSAGE["messageIdentifier"], "productId": "pro.yearly"}
            self.reply(200, json.dumps(content).encode())

        def reply(self, status, body):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"listening http://127.0.0.1:{server.server_address[1]}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
