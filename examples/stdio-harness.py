#!/usr/bin/env python3
"""A harness protocol v1 stdio harness around `openssl cms -verify` (forge run --target 'stdio:examples/stdio-harness.py VECTORS').
It reads one JSON message per line and answers hello and validate; the expected answer is never sent to it."""
import base64, calendar, json, pathlib, subprocess, sys, tempfile, time

vectors = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "Vectors")
anchors = {k: vectors / v["file"] for k, v in json.loads((vectors / "manifest.json").read_text())["trustAnchors"].items()}

def send(message):
    print(json.dumps(message), flush=True)

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        send({"type": "hello", "protocol": 1, "implementation": "openssl cms -verify (python)", "features": ["xcode", "sha1", "large", "robustness"],
              "errorGranularity": "coarse", "clockInjection": True, "maxConcurrency": 1})
    elif message["type"] == "validate":
        context = message["context"]
        at = calendar.timegm(time.strptime(context["now"], "%Y-%m-%dT%H:%M:%SZ"))
        with tempfile.NamedTemporaryFile(suffix=".pem") as anchor:
            subprocess.run(["openssl", "x509", "-inform", "DER", "-in", str(anchors[context["trustAnchor"]]), "-out", anchor.name], check=True)
            checked = subprocess.run(["openssl", "cms", "-verify", "-binary", "-inform", "DER", "-CAfile", anchor.name, "-purpose", "any",
                                      "-attime", str(at), "-out", "/dev/null"], input=base64.b64decode(message["input"]["data"]), capture_output=True)
        if checked.returncode == 0:
            send({"type": "result", "seq": message["seq"], "verdict": "accept"})
        else:  # coarse reasons from openssl's words: a chain failure, unparsable input, or else the signature
            said = checked.stderr.decode(errors="replace")
            reason = "chain" if "certificate verify error" in said else "container" if "asn1 encoding routines" in said else "signature"
            send({"type": "result", "seq": message["seq"], "verdict": "reject", "errorClass": reason, "message": said.strip().splitlines()[-1][-200:]})
    elif message["type"] == "stop":
        break
