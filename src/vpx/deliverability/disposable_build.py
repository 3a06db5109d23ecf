"""Builds data/disposable_domains.txt from a published list of disposable email domains, one domain a
line (the disposable-email-domains project's disposable_email_blocklist.conf, or its PyPI mirror's
set written out one a line); ``#`` starts a comment.

    python -m vpx.deliverability.disposable_build LIST [--output FILE] [--source WORDS]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vpx.deliverability.checks import DATA, domain_name

HEADER = """\
# Disposable email domains: an address at one of these domains, or at a subdomain of one, gets the
# `disposable` flag (vpx.deliverability.checks).
#
# Source: {source}: {count:,} domains.
# Rebuilt from a newer list, one domain a line, with:
#     python -m vpx.deliverability.disposable_build LIST [--output FILE]
"""


def build(text: str, *, source: str) -> str:
    """The data file's text: the list's domains in their DNS form, sorted, each once; lines that are
    no domain name are left out."""
    found = set()
    for line in text.splitlines():
        entry = line.split("#", 1)[0].strip()
        domain = domain_name(entry) if entry else None
        if domain is not None:
            found.add(domain)
    return HEADER.format(source=source, count=len(found)) + "".join(f"{d}\n" for d in sorted(found))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the disposable email domains list from a published one.")
    parser.add_argument("list", type=Path, help="the published list, one domain a line")
    parser.add_argument("--output", type=Path, default=DATA / "disposable_domains.txt")
    parser.add_argument(
        "--source", default="the disposable-email-domains project's published list", help="where the list came from"
    )
    arguments = parser.parse_args(argv)
    text = build(arguments.list.read_text(encoding="utf-8"), source=arguments.source)
    arguments.output.write_text(text, encoding="utf-8")
    print(f"{arguments.output}: {text.count(chr(10)) - HEADER.count(chr(10))} domains", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
