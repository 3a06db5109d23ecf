"""A registry import on PostgreSQL sends the search vectors its reader made
(vpx.contacts.search.vector), or leaves them to the server's trigger: either way, in bulk and in
batches, every stored vector is the definition's."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from sqlalchemy import text

from tests.contacts.test_search_vector import _differing, _postgres_only
from tests.registries.conftest import Importer
from tests.registries.formats import write_nppes, write_nucc

# ASCII names (vectors made by the reader), one the parser reads in its own way and one with an
# accent (both left to the server).
NAMES = ["BLUE WAVE DENTAL, INC.", "6E3BX DENTAL GROUP", "SMITH-JONES DDS PC", "A.B.C. SMILES", "CLÍNICA DENTAL SOL"]


def _dentists(npi_prefix: str, *, phones: bool) -> list[dict[str, str]]:
    """Dental organisations in San Diego, one a name, in the NPPES layout's fields."""
    rows = []
    for i, name in enumerate(NAMES):
        row = {"npi": f"{npi_prefix}{i:05d}", "entity": "2", "org": name, "street": f"{i} HARBOR BLVD",
               "city": "SAN DIEGO", "state": "CA", "zip": "92101", "country": "US", "taxonomy1": "1223G0001X",
               "switch1": "Y"}  # fmt: skip
        if phones:
            row["phone"] = f"61955{i:05d}"
        rows.append(row)
    return rows


async def test_a_registry_import_stores_the_definitions_vectors(
    app: FastAPI, database_url: str, run_import: Importer, tmp_path: Path
) -> None:
    _postgres_only(database_url)
    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    rows = _dentists("15550", phones=True)
    for mode in ("bulk", "batches"):
        summary = await run_import("nppes", write_nppes(tmp_path / "npi.csv", rows, encoding="utf-8"), mode=mode)
        assert summary.created + summary.unchanged == len(rows)
        assert await _differing(app) == (0, len(rows))


async def test_the_reader_makes_the_vectors_of_plain_ascii_contacts(
    app: FastAPI, database_url: str, run_import: Importer, tmp_path: Path
) -> None:
    # With the trigger off, only the vectors the import sent are there: the ASCII names', equal to
    # the definition's; the two left to the server have none.
    _postgres_only(database_url)
    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    rows = _dentists("15560", phones=False)
    database = app.state.database
    async with database.write_sessions() as session, session.begin():
        await session.execute(text("ALTER TABLE contacts DISABLE TRIGGER contacts_search_vector"))
    try:
        await run_import("nppes", write_nppes(tmp_path / "npi.csv", rows, encoding="utf-8"), mode="bulk")
    finally:
        async with database.write_sessions() as session, session.begin():
            await session.execute(text("ALTER TABLE contacts ENABLE TRIGGER contacts_search_vector"))
    async with database.read_sessions() as session:
        without = set(await session.scalars(text("SELECT business_name FROM contacts WHERE search_vector IS NULL")))
    assert without == {"6e3bx Dental Group", "Clínica Dental Sol"}
    assert await _differing(app) == (2, len(NAMES))  # the two without a vector
