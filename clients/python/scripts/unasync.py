"""Writes the sync client (``src/vpx_client/_blocking/``) from the async one (``src/vpx_client/_async/``).

    python clients/python/scripts/unasync.py            # rewrite _blocking/
    python clients/python/scripts/unasync.py --check    # exit 1 if _blocking/ is out of date

The two clients have one surface and one behaviour because they have one source: the async code,
with its keywords and names translated (`async def` -> `def`, `await x` -> `x`, `AsyncClient` ->
`Client`, `aiter_lines` -> `iter_lines`, …). Nothing else differs; edit the async side only.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "vpx_client"
SOURCE = PACKAGE / "_async"
TARGET = PACKAGE / "_blocking"

HEADER = "# Generated from the async client by clients/python/scripts/unasync.py. Do not edit: regenerate.\n"

# In order: the specific before the general.
RULES: list[tuple[str, str]] = [
    (r"\bAsyncGenerator\[(.+?), None\]", r"Generator[\1, None, None]"),
    (r"\bAwaitable\[(\w+)\]", r"\1"),
    (r"\basync def\b", "def"),
    (r"\basync for\b", "for"),
    (r"\basync with\b", "with"),
    (r"\bawait ", ""),
    (r"\bAsyncGenerator\b", "Generator"),
    (r"\bAsyncIterator\b", "Iterator"),
    (r"\bAsyncIterable\b", "Iterable"),
    (r"\bhttpx\.AsyncClient\b", "httpx.Client"),
    (r"\bhttpx\.AsyncBaseTransport\b", "httpx.BaseTransport"),
    (r"\bAsync([A-Z]\w*)", r"\1"),
    (r"\bvpx_client\._async\b", "vpx_client._blocking"),
    (r"\basync_sleep\b", "sync_sleep"),
    (r"\baiter_lines\b", "iter_lines"),
    (r"\baiter_bytes\b", "iter_bytes"),
    (r"\baread\b", "read"),
    (r"\baclose\b", "close"),
    (r"\b__aenter__\b", "__enter__"),
    (r"\b__aexit__\b", "__exit__"),
    (r"\b__aiter__\b", "__iter__"),
    (r"\b__anext__\b", "__next__"),
    (r"\bStopAsyncIteration\b", "StopIteration"),
    (r"\basync\b", "sync"),
]
_COMPILED = [(re.compile(pattern), replacement) for pattern, replacement in RULES]
_FROM_IMPORT = re.compile(r"^from (\S+) import (?!\()(.+)$")


def _member_key(name: str) -> tuple[int, str]:
    """isort's order-by-type, as ruff applies it: CONSTANTS, then Classes, then the rest."""
    bare = name.split(" as ")[0]
    kind = 0 if bare.isupper() and len(bare) > 1 else 1 if bare[:1].isupper() else 2
    return kind, bare


def _sort_imports(text: str) -> str:
    """Names in one-line `from … import a, b` statements are sorted again (renames change the order),
    and names the sync code no longer needs (Awaitable) are dropped."""
    lines = []
    for line in text.splitlines():
        match = _FROM_IMPORT.match(line)
        if match:
            names = [n.strip() for n in match.group(2).split(",") if n.strip() and n.strip() != "Awaitable"]
            line = f"from {match.group(1)} import {', '.join(sorted(names, key=_member_key))}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def translate(source: str) -> str:
    text = source
    for pattern, replacement in _COMPILED:
        text = pattern.sub(replacement, text)
    return HEADER + _sort_imports(text)


def expected() -> dict[str, str]:
    """The sync package's files, by name, as the async sources give them."""
    return {path.name: translate(path.read_text()) for path in sorted(SOURCE.glob("*.py"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when _blocking/ is stale")
    args = parser.parse_args()
    files = expected()
    if args.check:
        present = {path.name: path.read_text() for path in sorted(TARGET.glob("*.py"))}
        if present != files:
            stale = sorted(name for name in files.keys() | present.keys() if files.get(name) != present.get(name))
            print(f"{TARGET} is stale ({', '.join(stale)}): run {Path(__file__).name}", file=sys.stderr)
            return 1
        print("_blocking/ matches _async/")
        return 0
    TARGET.mkdir(exist_ok=True)
    for path in TARGET.glob("*.py"):
        if path.name not in files:
            path.unlink()
    for name, text in files.items():
        (TARGET / name).write_text(text)
    print(f"wrote {len(files)} files to {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
