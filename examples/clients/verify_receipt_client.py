#!/usr/bin/env python3
"""A verifyReceipt client written the way Apple says to call it, for testing against `forge serve`.

Production first; on status 21007 (a sandbox receipt) the same request goes to the sandbox. A status
Apple marks as temporary (21005, 21009, or 21100-21199 with is-retryable) is retried a few times, and a
failure of the transport (HTTP 5xx, a closed connection, a body that is not JSON) is reported, not
mistaken for a verdict. Prints one JSON object: the final status, the endpoints tried, and the response.

    verify_receipt_client.py BASE_URL RECEIPT_FILE [--password SECRET] [--exclude-old] [--ca PEM]

BASE_URL is what `forge serve` prints without the path (http://127.0.0.1:8080); RECEIPT_FILE is a
receipt as forge makes it (DER). Exit 0 when the final status is 0, 1 for another status, 2 when
the service could not give an answer.
"""
import argparse
import base64
import json
import sys
import time

import requests

TEMPORARY = {21005, 21009}


def call(url, body, verify):
    try:
        response = requests.post(url, json=body, timeout=10, verify=verify)
    except requests.RequestException as error:
        return None, f"transport: {type(error).__name__}"
    if response.status_code != 200:
        return None, f"http {response.status_code}"
    try:
        return response.json(), None
    except ValueError:
        return None, "the body is not JSON"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("receipt")
    parser.add_argument("--password")
    parser.add_argument("--exclude-old", action="store_true")
    parser.add_argument("--ca", help="PEM to trust for https (Certificates/root.pem)")
    parser.add_argument("--attempts", type=int, default=3)
    args = parser.parse_args()

    body = {"receipt-data": base64.b64encode(open(args.receipt, "rb").read()).decode()}
    if args.password is not None:
        body["password"] = args.password
    if args.exclude_old:
        body["exclude-old-transactions"] = True
    verify = args.ca if args.ca else True
    tried = []
    endpoint = "/verifyReceipt"
    answer, problem = None, None
    for _ in range(args.attempts * 2):
        tried.append(endpoint)
        answer, problem = call(args.base + endpoint, body, verify)
        if answer is None:
            break
        status = answer.get("status")
        if status == 21007 and endpoint == "/verifyReceipt":
            endpoint = "/sandbox/verifyReceipt"
            continue
        retry = status in TEMPORARY or (21100 <= (status or 0) <= 21199 and answer.get("is-retryable") is True)
        if retry and len(tried) < args.attempts + 1:
            time.sleep(0.05)
            continue
        break
    result = {"tried": tried, "status": None if answer is None else answer.get("status"), "problem": problem, "response": answer}
    print(json.dumps(result))
    sys.exit(2 if answer is None else (0 if answer.get("status") == 0 else 1))


if __name__ == "__main__":
    main()
