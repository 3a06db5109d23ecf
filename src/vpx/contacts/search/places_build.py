"""Builds data/us_zip_codes.tsv.gz, the ZIP codes search reads a question's place with, from the
``zipcodes`` package (PyPI, MIT licence; version 3). The package's data, as its README says, is put
together from three sources: the free ZIP code database of unitedstateszipcodes.org (each code's
preferred city, state and type), the USPS's ZIP Locale Detail (public domain: the codes in use), and
GeoNames (CC BY 4.0: coordinates, which this file leaves out). Only a code, its city and its state are
kept here:

    .venv/bin/pip install zipcodes
    .venv/bin/python -m vpx.contacts.search.places_build [--output FILE]

One line per ZIP code in use (military ZIP codes left out: APO/FPO is no city): ``zip<TAB>city<TAB>state``,
sorted by ZIP, gzipped. The service reads the file, not the package: the package's own loading costs
~140 MB in every server process, the file a few.

Why this list (docs/search.md, "Places"): the Census ZCTA list is public domain but a ZCTA is an
area, not a ZIP code, and has no city name; ``uszipcode`` downloads a database at first use. A list
built from the USPS's ZIP Locale Detail alone would do as well if the first source's terms were a
concern: the file's three columns are all this service needs.
"""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent / "data" / "us_zip_codes.tsv.gz"
HEADER = (
    "# US ZIP codes and their preferred city and state, from the zipcodes package {version} (PyPI, MIT licence;\n"
    "# its data from unitedstateszipcodes.org's free database and the USPS's ZIP Locale Detail).\n"
    "# Built by python -m vpx.contacts.search.places_build; military codes left out.\n"
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
