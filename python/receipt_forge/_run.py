"""Finding and running the bundled `forge`: one place for the binary's path, the command line and the error."""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterable, List, Optional, Sequence

#: Set to a `forge` executable (e.g. `.build/debug/forge` of a checkout) to use it instead of the bundled one.
BINARY_VARIABLE = "RECEIPT_FORGE_BINARY"

#: The exit code of a `forge` that cannot be found or started, as a shell says it (command not found).
NOT_FOUND = 127


class ForgeError(Exception):
    """What `forge` refused, as it said it: its one-line message and its exit code (64 usage, 65 bad data,
    66 a missing file, 69 a port that will not bind or a missing part, 127 no `forge` at all)."""

    def __init__(self, message: str, exit_code: int, command: Sequence[str] = (), stderr: str = ""):
        super().__init__(f"{message} (exit {exit_code})")
        self.message = message
        self.exit_code = exit_code
        self.command = list(command)
        self.stderr = stderr


def binary() -> str:
    """The `forge` this package runs: $RECEIPT_FORGE_BINARY, else the one in the wheel, else `forge` on PATH."""
    chosen = os.environ.get(BINARY_VARIABLE)
    if chosen:
        if not os.access(chosen, os.X_OK):
            raise ForgeError(f"{BINARY_VARIABLE}={chosen} is not an executable file", NOT_FOUND)
        return chosen
    bundled = Path(__file__).resolve().parent / "bin" / "forge"
    if os.access(bundled, os.X_OK):
        return str(bundled)
    found = shutil.which("forge")
    if found:
        return found
    raise ForgeError(
        f"no forge binary: the wheel's receipt_forge/bin/forge is missing, and neither {BINARY_VARIABLE} nor PATH names one",
        NOT_FOUND,
    )


def one_line(stderr: str) -> str:
    """forge's own message: its `forge: error: …` line, else the last line it wrote."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("forge: error:") or line.startswith("Error:"):
            return line
    return lines[-1] if lines else "forge failed and said nothing on stderr"


def value(option: Any) -> str:
    """An option's value as forge reads it: dates as 2025-01-01T00:00:00Z, paths as text."""
    if isinstance(option, _dt.datetime):
        if option.tzinfo is not None:
            option = option.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return option.replace(microsecond=0).isoformat() + "Z"
    if isinstance(option, Path):
        return str(option)
    return str(option)


def arguments(options: dict) -> List[str]:
    """Keyword options as flags: `notification_type="DID_RENEW"` is `--notification-type DID_RENEW`, True a bare flag,
    False and None nothing, a list or tuple the flag repeated."""
    words: List[str] = []
    for name, option in options.items():
        flag = "--" + name.rstrip("_").replace("_", "-")
        if option is None or option is False:
            continue
        if option is True:
            words.append(flag)
        elif isinstance(option, (list, tuple)):
            for each in option:
                words += [flag, value(each)]
        else:
            words += [flag, value(option)]
    return words


def run(args: Iterable[Any], *, input: Optional[bytes] = None, timeout: float = 120, success: Sequence[int] = (0,)) -> subprocess.CompletedProcess:
    """Runs `forge ARGS…` to its end (at most `timeout` seconds); an exit code not in `success` raises :class:`ForgeError`."""
    command = [binary()] + [value(word) for word in args]
    try:
        done = subprocess.run(command, input=input, capture_output=True, timeout=timeout)
    except OSError as error:
        raise ForgeError(f"cannot run {command[0]}: {error.strerror}", NOT_FOUND, command) from error
    except subprocess.TimeoutExpired as error:
        raise ForgeError(f"forge did not finish within {timeout} s", 124, command) from error
    if done.returncode not in success:
        stderr = done.stderr.decode("utf-8", "replace")
        raise ForgeError(one_line(stderr), done.returncode, command, stderr)
    return done


def main() -> None:
    """The wheel's `forge` command: the bundled binary, run in this process's place."""
    import sys

    try:
        path = binary()
    except ForgeError as error:
        sys.exit(f"forge: error: {error.message}")
    os.execv(path, [path] + sys.argv[1:])
