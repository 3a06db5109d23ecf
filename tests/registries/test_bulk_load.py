"""The bulk load mode (vpx.registries.load_modes): the same catalogue as batches, search complete when
it ends, every index back; a killed bulk load leaves the catalogue as it was; ``auto`` picks bulk
only for a large file into a much smaller catalogue."""

from __future__ import annotations

import csv
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, text

from tests.factories import Factory
from tests.registries.conftest import Importer, catalogue_counts, possible_duplicates, shared
from tests.registries.formats import write_nppes, write_nucc
from tests.registries.test_nppes import CLINIC, DOCTOR
from vpx.models import Contact, DecisionMaker
from vpx.registries import importer, load_modes
from vpx.registries.seen import SeenIds


async def _schema(app: FastAPI) -> set[str]:
    """Every index, trigger and foreign key on the tables a bulk load touches."""
    database = app.state.database
    async with database.read_sessions() as session:
        if database.is_sqlite:
            rows = await session.execute(
                text("SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master WHERE tbl_name IN "
                     "('contacts', 'contact_sources', 'decision_makers', 'registry_records', 'contacts_fts')")
            )  # fmt: skip
        else:
            rows = await session.execute(
                text(
                    "SELECT indexname || ' ' || indexdef FROM pg_indexes WHERE tablename IN "
                    "('contacts', 'contact_sources', 'decision_makers', 'registry_records') "
                    "UNION ALL SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint "
                    "WHERE conrelid IN ('contacts'::regclass, 'contact_sources'::regclass, "
                    "'decision_makers'::regclass, 'registry_records'::regclass)"
                )
            )
        return {str(row[0]) for row in rows}


async def _search(client: httpx.AsyncClient, headers: dict[str, str], **params: str) -> list[str]:
    response = await client.get("/api/v1/contacts/search", params=params, headers=headers)
    assert response.status_code == 200, response.text
    return [c["business_name"] for c in response.json()["contacts"]]


async def test_a_bulk_load_makes_the_same_catalogue_and_leaves_search_complete(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, run_import: Importer, tmp_path: Path
) -> None:
    schema = await _schema(app)
    await run_import("nucc", shared("nppes", "nucc_taxonomy_150.csv"))
    # A record listed twice, deactivated the second time, batches apart: the load updates a
    # contact it created itself, and the rebuilt index must leave it out.
    sample = shared("nppes", "npidata_pfile_sample_k0bl.csv")
    with sample.open(newline="") as handle:
        rows = list(csv.reader(handle))
    first = next(row for row in rows[1:] if row[1] in ("1", "2"))
    ended = ["" for _ in first]
    ended[0], ended[rows[0].index("NPI Deactivation Date")] = first[0], "01/01/2026"
    doubled = tmp_path / "doubled.csv"
    with doubled.open("w", newline="") as handle:
        csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows([*rows, ended])
    summary = await run_import("nppes", doubled, batch_size=100, mode="bulk")
    assert summary.mode == "bulk" and summary.complete
    assert await _schema(app) == schema  # every index, trigger and constraint is back

    counts = await catalogue_counts(app)
    assert counts["contacts"] == summary.created and counts["contacts_without_source"] == 0
    assert counts["records"] == counts["sources"] == summary.created + summary.merged

    headers = (await factory.account()).headers("ro")
    assert "Cumberland County Hospital System, Inc" in await _search(client, headers, q="cumberlnd hospital")
    cardiology = await _search(client, headers, specialty="cardiovascular", limit="100")
    assert "William C Pilcher, MD" in cardiology
    async with app.state.database.read_sessions() as session:
        contact = (await session.execute(select(Contact).where(Contact.status == "deactivated"))).scalars().all()
        assert len(contact) == 1
        assert contact[0].business_name not in await _search(client, headers, q=contact[0].business_name)

    again = await run_import("nppes", doubled, batch_size=100, mode="batches")
    assert (again.created, again.merged) == (0, 0)  # every record known: upserted, not duplicated


async def test_a_bulk_load_keeps_decision_makers_and_holds_two_npis_apart(
    app: FastAPI, run_import: Importer, tmp_path: Path
) -> None:
    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    # The same practice under a second NPI: two NPIs are two providers (a veto), recorded for review.
    twin = {**CLINIC, "npi": "1234567901", "org": "SMILE BRIGHT DENTAL PLLC"}
    summary = await run_import("nppes", write_nppes(tmp_path / "a.csv", [CLINIC, DOCTOR, twin]), mode="bulk")
    assert (summary.created, summary.merged) == (3, 0)
    async with app.state.database.read_sessions() as session:
        people = (await session.execute(select(DecisionMaker.name))).scalars().all()
    assert sorted(people) == ["Maria Ortega", "Maria Ortega"]
    [(_, _, reason)] = await possible_duplicates(app)
    assert reason == "npi"


async def test_a_killed_bulk_load_leaves_the_catalogue_as_it_was(
    app: FastAPI, run_import: Importer, tmp_path: Path
) -> None:
    await run_import("nucc", shared("nppes", "nucc_taxonomy_150.csv"))
    await run_import("nppes", write_nppes(tmp_path / "first.csv", [DOCTOR]))
    before = await catalogue_counts(app)
    schema = await _schema(app)
    batches = 0

    def kill_after_two_batches(_: importer.Progress) -> None:
        nonlocal batches
        batches += 1
        if batches == 2:
            raise KeyboardInterrupt  # what a Ctrl-C or a killed worker looks like between batches

    sample = shared("nppes", "npidata_pfile_sample_k0bl.csv")
    with pytest.raises(KeyboardInterrupt):
        await run_import("nppes", sample, batch_size=100, mode="bulk", progress=kill_after_two_batches)
    assert await catalogue_counts(app) == before
    assert await _schema(app) == schema

    finished = await run_import("nppes", sample, batch_size=100, mode="bulk")
    assert finished.complete and finished.created > 300
    assert (await catalogue_counts(app))["contacts"] == before["contacts"] + finished.created


async def test_auto_loads_in_bulk_only_a_large_file_into_a_much_smaller_catalogue(
    app: FastAPI, run_import: Importer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = app.state.database
    assert await load_modes.choose(database, requested="auto", contacts=True, rows=99_999) == "batches"
    assert await load_modes.choose(database, requested="auto", contacts=True, rows=100_000) == "bulk"
    assert await load_modes.choose(database, requested="auto", contacts=False, rows=10**7) == "batches"
    assert await load_modes.choose(database, requested="batches", contacts=True, rows=10**7) == "batches"
    assert await load_modes.choose(database, requested="bulk", contacts=False, rows=10**7) == "batches"
    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    await run_import("nppes", write_nppes(tmp_path / "a.csv", [CLINIC, DOCTOR]))
    monkeypatch.setattr(load_modes, "BULK_MIN_ROWS", 10)
    assert await load_modes.choose(database, requested="auto", contacts=True, rows=19) == "batches"
    assert await load_modes.choose(database, requested="auto", contacts=True, rows=20) == "bulk"


def test_the_row_count_is_estimated_from_the_first_lines() -> None:
    head = b"h1,h2\n" + b"a,b\n" * 100
    assert load_modes.estimated_rows(len(head), head) == 101
    assert load_modes.estimated_rows(10 * len(head), head) == 1010
    assert load_modes.estimated_rows(0, b"") == 0


def test_the_written_ids_filter_never_forgets_and_rarely_guesses() -> None:
    written = SeenIds(10_000)
    ids = [f"{1_000_000_000 + 7 * i}" for i in range(10_000)]
    for record_id in ids:
        written.add(record_id)
    assert all(record_id in written for record_id in ids)
    others = [f"{2_000_000_000 + i}" for i in range(10_000)]
    assert sum(other in written for other in others) < 300  # about 1 %: looked up, never wrong
