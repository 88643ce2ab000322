#!/usr/bin/env python3
"""Writes a wrk Lua script that POSTs every corpus vector's validate message to /validate, in turn: the
runner's own requests, so wrk and `forge run` load the same endpoint with the same bodies.
Usage: scripts/wrk-requests.py OUT.lua [VECTORS_DIR]"""
import base64, json, sys

out_path = sys.argv[1]
vectors = sys.argv[2] if len(sys.argv) > 2 else "Vectors"
manifest = json.load(open(f"{vectors}/manifest.json"))
bodies = []
for seq, v in enumerate(manifest["vectors"]):
    data = base64.b64encode(open(f"{vectors}/{v['file']}", "rb").read()).decode()
    bodies.append(json.dumps({"type": "validate", "seq": seq, "id": v["id"], "input": {"encoding": "base64", "data": data}, "context": v["context"]}))
with open(out_path, "w") as out:
    out.write("local bodies = {\n" + ",\n".join("[==[" + b + "]==]" for b in bodies) + "\n}\n")
    out.write('local i = 0\nrequest = function()\n  i = i % #bodies + 1\n  return wrk.format("POST", "/validate", {["Content-Type"] = "application/json"}, bodies[i])\nend\n')
