#!/usr/bin/env python3
"""Runs the Python blocks of a Markdown page (Documentation/python.md) as the test folder they describe: each
```python block starts with `# file: NAME` and is written to NAME in a fresh folder (a block without it fails
the run: every snippet must run); then pytest runs the folder with the interpreter running this script.

    python-doc-test.py PAGE.md [pytest arguments]
"""

import os
import re
import subprocess
import sys
import tempfile


def main() -> int:
    page, extra = sys.argv[1], sys.argv[2:]
    text = open(page, encoding="utf-8").read()
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    if not blocks:
        sys.exit(f"{page}: no ```python block")
    with tempfile.TemporaryDirectory(prefix="python-doc-") as folder:
        for number, block in enumerate(blocks, 1):
            first = block.split("\n", 1)[0]
            match = re.fullmatch(r"# file: ([\w.-]+\.py)", first)
            if not match:
                sys.exit(f"{page}: Python block {number} does not start with '# file: NAME.py', so it would not run")
            with open(os.path.join(folder, match.group(1)), "a", encoding="utf-8") as file:
                file.write(block)
        plugin = [] if _installed() else ["-p", "receipt_forge.pytest_plugin"]
        print(f"python-doc-test.py: {len(blocks)} blocks of {page} as {sorted(os.listdir(folder))}", flush=True)
        return subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, *extra, folder], cwd=folder)


def _installed() -> bool:
    """Whether an installed wheel's pytest11 entry point loads the plugin already."""
    from importlib.metadata import distributions

    return any(point.group == "pytest11" and point.value == "receipt_forge.pytest_plugin" for d in distributions() for point in d.entry_points)


if __name__ == "__main__":
    sys.exit(main())
