"""An exit-code adapter (forge run --target exit:...) run as a stdio harness, one forked child per vector.

    forge run --target 'stdio:PYTHON examples/harnesses/forking.py --vectors Vectors --artifacts receipt \
        --features sha1,large --granularity coarse examples/harnesses/aprv.py'

What the child sees is what `exit:` gives a fresh process: the vector's bytes on stdin, the RF_* variables
(ExecValidator.exitCodeEnvironment, in Swift), its own stdout and stderr; exit 0 accepts, 1 rejects (first stdout line:
the error class, stderr: the message), anything else is an error. The difference is the cost: this process imports
the adapter's modules once (its top-level import statements, nothing else of it), and each child is a fork of that
state, so a Python validator no longer pays its imports (0.1 to 0.2 s of CPU) per vector. Every child starts from the
same state, as every exit process did: nothing one vector does reaches the next. scripts/known-results.sh runs the
Python rows so; their verdicts are those of the exit transport (KnownResultsTests compares them with the published
matrix).
"""
import argparse, ast, base64, json, os, runpy, sys, tempfile, traceback

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--vectors", required=True, help="the corpus folder: its manifest names each trust anchor's file")
parser.add_argument("--artifacts", choices=["receipt", "jws", "transaction-receipt"], required=True)
parser.add_argument("--features", default="", help="comma-separated, as --features of an exit target")
parser.add_argument("--granularity", choices=["none", "coarse", "fine"], required=True)
parser.add_argument("adapter", help="the exit-code adapter (a Python file)")
options = parser.parse_args()

vectors = os.path.abspath(options.vectors)
with open(os.path.join(vectors, "manifest.json"), "rb") as manifest:
    anchors = {name: os.path.join(vectors, anchor["file"]) for name, anchor in json.load(manifest)["trustAnchors"].items()}
adapter = os.path.abspath(options.adapter)

# The adapter's top-level imports, run here once: its children find them in sys.modules.
with open(adapter, "rb") as source:
    tree = ast.parse(source.read(), adapter)
sys.path.insert(0, os.path.dirname(adapter))
exec(compile(ast.Module([node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))], []), adapter, "exec"), {})

# The protocol on the descriptors this process was given; the children get 0, 1 and 2 of their own.
protocol_in = os.fdopen(os.dup(0), "rb")
protocol_out = os.fdopen(os.dup(1), "wb")


def send(message):
    protocol_out.write(json.dumps(message).encode() + b"\n")
    protocol_out.flush()


def environment(message):
    """RF_* as forge run's exit transport sets them: every one, empty when the context has no value."""
    context = message["context"]
    app_apple_id = context.get("appAppleId")
    return {
        "RF_ID": message["id"], "RF_NOW": context["now"], "RF_TRUST_ANCHOR": anchors.get(context["trustAnchor"], ""),
        "RF_BUNDLE_ID": context.get("bundleId") or "", "RF_APP_VERSION": context.get("appVersion") or "", "RF_DEVICE_ID": context.get("deviceId") or "",
        "RF_ENVIRONMENT": context.get("environment") or "", "RF_ARTIFACT": context.get("artifact") or "receipt",
        "RF_APP_APPLE_ID": "" if app_apple_id is None else str(app_apple_id), "RF_OCSP_RESPONDER": (context.get("ocsp") or {}).get("responder", ""),
    }


def child(stdin, stdout, stderr, variables):
    """Becomes the exit process: never returns."""
    status = 2
    try:
        for number, file in ((0, stdin), (1, stdout), (2, stderr)):
            os.dup2(file.fileno(), number)
        sys.stdin, sys.stdout, sys.stderr = open(0, "r", closefd=False), open(1, "w", closefd=False), open(2, "w", closefd=False)
        os.environ.update(variables)
        sys.argv = [adapter]
        try:
            runpy.run_path(adapter, run_name="__main__")
            status = 0
        except SystemExit as exit:  # as the interpreter ends on it: None is 0, a number its status, anything else said and 1
            if exit.code is None or isinstance(exit.code, int):
                status = exit.code or 0
            else:
                print(exit.code, file=sys.stderr)
                status = 1
        except BaseException:  # an adapter that breaks is a harness error (its excepthook exits 2), never a reject
            traceback.print_exc()
            status = 2
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status & 0xFF)


def validate(message):
    variables = environment(message)
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        stdin.write(base64.b64decode(message["input"]["data"]))
        stdin.flush()
        stdin.seek(0)
        pid = os.fork()
        if pid == 0:
            child(stdin, stdout, stderr, variables)
        _, status = os.waitpid(pid, 0)
        stdout.seek(0)
        stderr.seek(0)
        said, complaint = stdout.read(), stderr.read().decode("utf-8", "replace").strip()
    if os.WIFSIGNALED(status):
        return {"type": "error", "seq": message["seq"], "message": f"killed by signal {os.WTERMSIG(status)}; stderr: {complaint[-2000:]}"}
    code = os.WEXITSTATUS(status)
    if code == 0:
        return {"type": "result", "seq": message["seq"], "verdict": "accept"}
    if code == 1:
        reply = {"type": "result", "seq": message["seq"], "verdict": "reject"}
        first = said.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
        if first:
            reply["errorClass"] = first
        if complaint:
            reply["message"] = complaint[-2000:]
        return reply
    return {"type": "error", "seq": message["seq"], "message": f"exit status {code}; stderr: {complaint[-2000:]}"}


for line in protocol_in:
    message = json.loads(line)
    if message["type"] == "hello":
        send({
            "type": "hello", "protocol": 1, "implementation": f"{os.path.basename(adapter)} (exit-code adapter, forked per vector)",
            "features": [feature for feature in options.features.split(",") if feature], "artifacts": [options.artifacts],
            "errorGranularity": options.granularity, "clockInjection": True, "maxConcurrency": 1,
        })
    elif message["type"] == "validate":
        send(validate(message))
    elif message["type"] == "stop":
        break
