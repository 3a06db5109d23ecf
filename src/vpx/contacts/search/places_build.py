"""Builds data/us_zip_codes.tsv.gz, the ZIP codes search reads a question's place with, from the
``zipcodes`` package (PyPI, MIT licence; its data is the USPS's ZIP code list with each code's
preferred city and state):

    .venv/bin/pip install zipcodes
    .venv/bin/python -m vpx.contacts.search.places_build [--output FILE]

One line per ZIP code in use (military ZIP codes left out: APO/FPO is no city): ``zip<TAB>city<TAB>state``,
sorted by ZIP, gzipped. The service reads the file, not the package: the package's own loading costs
0.6 s and ~140 MB in every server process, the file 60 ms and a few.
"""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent / "data" / "us_zip_codes.tsv.gz"
HEADER = (
    "# US ZIP codes and their preferred city and state, from the zipcodes package {version} (PyPI, MIT licence;\n"
    "# the USPS's list). Built by python -m vpx.contacts.search.places_build; military codes left out.\n"
)


def build(output: Path = OUTPUT) -> int:
    import zipcodes  # a build-time dependency only

    rows = sorted(
        (z["zip_code"], z["city"], z["state"])
        for z in zipcodes.list_all()  # type: ignore[no-untyped-call]
        if z["zip_code_type"] != "MILITARY" and z["state"] not in {"AA", "AE", "AP"}
    )
    from importlib.metadata import version

    text = HEADER.format(version=version("zipcodes")) + "".join(
        f"{code}\t{city}\t{state}\n" for code, city, state in rows
    )
    # mtime=0: the same list gives the same bytes.
    with output.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as handle:
        handle.write(text.encode("utf-8"))
    return len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    print(f"{build(args.output):,} ZIP codes written to {args.output}")


if __name__ == "__main__":
    main()
