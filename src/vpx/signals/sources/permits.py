"""`permit_filed` signals from city building-permit open-data CSVs: one importer, driven by a mapping
file per city (``cities/<city>.toml``); adding a city is adding a mapping file.

A permit names the work (type, description, estimated cost, issue date) and, in most cities, the
contractors who will do it. The signal is about the contractor the mapping prefers (the general
contractor): a business with a project funded and dated — warm per D20 (a timeline, a named vendor).
Rows that name no business are skipped with the reason ``no_business``; the pipeline links the
business to the catalogue as the registry importers do, or creates it from what the permit gives.
"""

from __future__ import annotations

import csv
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path
from typing import Any

from vpx.registries.reader import open_text
from vpx.signals.events import BusinessRef, SignalEvent

CITIES_PACKAGE = "vpx.signals.sources.cities"
# Estimated costs at or below this are placeholders (SF uses 1), not budgets.
PLACEHOLDER_COST = Decimal(100)
# The vertical a permit's work belongs to, by words in its type or description; else construction.
VERTICAL_WORDS: tuple[tuple[str, str], ...] = (
    ("solar", "solar"),
    ("photovoltaic", "solar"),
    ("roof", "home-services"),
    ("plumb", "home-services"),
    ("hvac", "home-services"),
    ("furnace", "home-services"),
    ("kitchen", "home-services"),
    ("bath", "home-services"),
    ("electric", "home-services"),
)


@dataclass(frozen=True)
class CityMapping:
    slug: str
    city: str
    state: str
    date_format: str
    columns: dict[str, Any]
    contractors: dict[str, Any] = field(default_factory=dict)

    @property
    def source(self) -> str:
        return f"permits:{self.slug}"


def cities() -> list[str]:
    return sorted(
        p.name.removesuffix(".toml") for p in resources.files(CITIES_PACKAGE).iterdir() if p.name.endswith(".toml")
    )


def load_mapping(slug: str) -> CityMapping:
    if slug not in cities():
        raise ValueError(f"no permit mapping for {slug!r}; known cities: {', '.join(cities())}")
    data = tomllib.loads(resources.files(CITIES_PACKAGE).joinpath(f"{slug}.toml").read_text())
    return CityMapping(
        slug=slug,
        city=data["city"],
        state=data["state"],
        date_format=data["date_format"],
        columns=data["columns"],
        contractors=data.get("contractors", {}),
    )


@dataclass
class PermitSkip:
    line: int
    reason: str
    message: str


def _money(raw: str) -> Decimal | None:
    text = raw.replace("$", "").replace(",", "").strip()
    try:
        value = Decimal(text) if text else None
    except InvalidOperation:
        return None
    return value if value is not None and value > PLACEHOLDER_COST else None


def _date(raw: str, date_format: str) -> datetime | None:
    text = raw.strip().split(" ")[0] if " " in raw.strip() and ":" in raw else raw.strip()
    try:
        return datetime.strptime(text, date_format).replace(tzinfo=UTC) if text else None
    except ValueError:
        return None


def _vertical(*texts: str) -> str:
    words = " ".join(texts).lower()
    for word, vertical in VERTICAL_WORDS:
        if word in words:
            return vertical
    return "construction"


def _contractor(row: dict[str, str], mapping: CityMapping) -> BusinessRef | None:
    spec = mapping.contractors
    if not spec:
        return None
    found: list[tuple[int, BusinessRef]] = []
    for n in range(1, int(spec["count"]) + 1):
        name = row.get(spec["name"].format(n=n), "").strip()
        kind = row.get(spec["type"].format(n=n), "").strip().upper()
        if not name or kind in spec.get("ignore", []):
            continue
        city = row.get(spec["city"].format(n=n), "").strip() or mapping.city
        state = row.get(spec["state"].format(n=n), "").strip() or mapping.state
        business = BusinessRef(
            name=name,
            city=city.title(),
            state=state.upper(),
            phone=re.sub(r"\s*[xX]\s*$", "", row.get(spec["phone"].format(n=n), "")).strip() or None,
            address=row.get(spec["address"].format(n=n), "").strip() or None,
            postal_code=row.get(spec["postal_code"].format(n=n), "").strip().rstrip("-") or None,
        )
        found.append((0 if kind in spec.get("prefer", []) else 1, business))
    return min(found, key=lambda item: item[0])[1] if found else None


def read_permits(path: Path, mapping: CityMapping, skipped: list[PermitSkip]) -> Iterator[SignalEvent]:
    """One event per permit naming a business; the others are added to ``skipped`` with a reason."""
    opened = open_text(path)
    try:
        reader = csv.reader(opened.text)
        header = [name.strip() for name in next(reader, [])]
        cols = mapping.columns
        missing = [c for c in (cols["permit_number"], cols["permit_type"]) if c not in header]
        if missing:
            raise ValueError(f"{path} is not a {mapping.city} permits file: no column {', '.join(missing)}")
        line = 1
        for values in reader:
            line += 1
            row = dict(zip(header, values, strict=False))
            number = row.get(cols["permit_number"], "").strip()
            if not number:
                skipped.append(PermitSkip(line, "no_permit_number", "the row has no permit number"))
                continue
            business = _contractor(row, mapping)
            if business is None:
                skipped.append(PermitSkip(line, "no_business", f"permit {number} names no contractor"))
                continue
            permit_type = row.get(cols["permit_type"], "").strip()
            description = row.get(cols.get("description", ""), "").strip()
            issued = _date(row.get(cols["issued"], ""), mapping.date_format)
            if issued is None:
                skipped.append(PermitSkip(line, "no_date", f"permit {number} has no readable date"))
                continue
            cost = _money(row.get(cols.get("cost", ""), ""))
            site = " ".join(row.get(c, "").strip() for c in cols.get("address", []) if row.get(c, "").strip())
            evidence: dict[str, Any] = {
                "need": permit_type.lower(),
                "timeline": f"permit issued {issued.date().isoformat()}",
                "vendor_named": business.name,
                "permit_number": number,
                "work": description[:500],
                "site": f"{site}, {mapping.city}, {mapping.state}" if site else None,
            }
            if cost is not None:
                evidence["budget"] = f"${cost:,.2f}"
            yield SignalEvent(
                category="permit_filed",
                industry=_vertical(permit_type, description),
                observed_at=issued,
                evidence={k: v for k, v in evidence.items() if v},
                source=mapping.source,
                source_record_id=number,
                topic=permit_type.lower()[:200] or None,
                summary=f"{permit_type.title()} permit {number} in {mapping.city}: {description[:200]}".strip(),
                state=mapping.state,
                city=mapping.city,
                business=business,
            )
    finally:
        opened.close()
