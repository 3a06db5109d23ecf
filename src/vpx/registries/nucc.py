"""The NUCC Health Care Provider Taxonomy code set (`vpx import nucc nucc_taxonomy_*.csv`).

The CSV comes from nucc.org in Windows-1252; version 15 has the header
``Code,Type,Classification,Specialization,Definition,Notes`` and newer ones call ``Type``
``Grouping`` and add ``Display Name`` and ``Section``. Each code gets the specialty contacts show
and the vertical its providers belong to; NPPES imports look codes up here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.models import TaxonomyCode
from vpx.registries.reader import CsvTable, OpenedFile, SkipRow
from vpx.registries.sources import ImportContext, ReadBatch, Source, register

# Classifications whose providers belong to a vertical other than healthcare; keyed by lower case.
_BY_CLASSIFICATION = {
    "oral & maxillofacial surgery": "dental",
    "veterinarian": "veterinary",
    "contractor": "home-services",
    "lodging": "hospitality",
    "massage therapist": "fitness-wellness",
    "local education agency (lea)": "education",
    "student in an organized health care education/training program": "education",
    "home health": "senior-care",
    "hospice care, community based": "senior-care",
    "in home supportive care": "senior-care",
    "nursing care": "senior-care",
    "pace provider organization": "senior-care",
    "adult companion": "senior-care",
    "homemaker": "senior-care",
    "chore provider": "senior-care",
    "home health aide": "senior-care",
    "nursing home administrator": "senior-care",
    "respite care": "senior-care",
    "community/behavioral health": "mental-health",
    "psychiatric unit": "mental-health",
    "psychiatric hospital": "mental-health",
    "licensed psychiatric technician": "mental-health",
    "durable medical equipment & medical supplies": "medical-devices",
    "prosthetic/orthotic supplier": "medical-devices",
    "hearing  aid equipment": "medical-devices",
    "hearing aid equipment": "medical-devices",
    "eyewear supplier (equipment, not the service)": "medical-devices",
}
_BY_GROUPING = {
    "dental providers": "dental",
    "behavioral health & social service providers": "mental-health",
    "managed care organizations": "insurance",
}
_MENTAL_WORDS = ("psychiatr", "mental", "substance", "behavioral", "emotionally", "addiction")


def taxonomy_vertical(grouping: str, classification: str, specialization: str) -> str:
    """The vertical of a taxonomy code: dental, mental-health, senior-care, veterinary, … or healthcare."""
    group, kind, special = grouping.strip().lower(), classification.strip().lower(), specialization.strip().lower()
    if kind in _BY_CLASSIFICATION:
        return _BY_CLASSIFICATION[kind]
    if group in _BY_GROUPING:
        return _BY_GROUPING[group]
    if kind == "dental laboratory":
        return "dental"
    if group == "nursing & custodial care facilities":
        return "mental-health" if "mental" in kind else "senior-care"
    if group == "transportation services":
        return "healthcare" if kind == "ambulance" else "logistics-transportation"
    if group in ("residential treatment facilities", "hospital units") or kind in (
        "psychiatry & neurology",
        "clinic/center",
        "counselor",
        "rehabilitation counselor",
    ):
        text = f"{kind} {special}"
        if any(word in text for word in _MENTAL_WORDS) and "neurology" not in special:
            return "mental-health"
    return "healthcare"


def taxonomy_specialty(classification: str, specialization: str) -> str:
    """``Classification, Specialization`` (``Internal Medicine, Cardiovascular Disease``)."""
    classification, specialization = " ".join(classification.split()), " ".join(specialization.split())
    return f"{classification}, {specialization}" if specialization else classification


@register
class NuccTaxonomy(Source):
    name = "nucc"
    registry = "nucc"
    title = "NUCC Health Care Provider Taxonomy code set"

    def read(self, opened: OpenedFile, ctx: ImportContext) -> Iterator[dict[str, Any] | SkipRow]:
        table = CsvTable(opened)
        code_at = table.require("Code")
        group_at = table.require("Grouping", "Type")
        class_at = table.require("Classification")
        special_at = table.require("Specialization")
        for row in table.rows():
            if isinstance(row, SkipRow):
                yield row
                continue
            values = row.values
            code = values[code_at].strip().upper()
            classification = values[class_at].strip()
            if len(code) != 10 or not code.isalnum():
                yield SkipRow("invalid_code", f"line {row.line}: {code!r} is not a taxonomy code")
                continue
            if not classification:
                yield SkipRow("missing_classification", f"line {row.line}: code {code}")
                continue
            grouping, specialization = " ".join(values[group_at].split()), values[special_at].strip()
            yield {
                "code": code,
                "grouping": grouping,
                "classification": " ".join(classification.split()),
                "specialization": " ".join(specialization.split()) or None,
                "specialty": taxonomy_specialty(classification, specialization),
                "vertical": taxonomy_vertical(grouping, classification, specialization),
            }

    async def write(self, session: AsyncSession, read: ReadBatch, ctx: ImportContext) -> None:
        batch: list[dict[str, Any]] = list({entry["code"]: entry for entry in read.items}.values())
        codes = [entry["code"] for entry in batch]
        known = {
            code.code: code for code in await session.scalars(select(TaxonomyCode).where(TaxonomyCode.code.in_(codes)))
        }
        for entry in batch:
            current = known.get(entry["code"])
            if current is None:
                session.add(TaxonomyCode(**entry, updated_at=ctx.now))
                ctx.summary.created += 1
            elif any(getattr(current, key) != value for key, value in entry.items()):
                for key, value in entry.items():
                    setattr(current, key, value)
                current.updated_at = ctx.now
                ctx.summary.updated += 1
            else:
                ctx.summary.unchanged += 1
        await session.flush()


async def load_taxonomy(session: AsyncSession) -> dict[str, tuple[str, str, str, str]]:
    """Every code: (specialty, vertical, grouping, classification)."""
    rows = await session.execute(
        select(
            TaxonomyCode.code,
            TaxonomyCode.specialty,
            TaxonomyCode.vertical,
            TaxonomyCode.grouping,
            TaxonomyCode.classification,
        )
    )
    return {row[0]: (row[1], row[2], row[3], row[4]) for row in rows}
