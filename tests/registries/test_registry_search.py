"""D13 on what the registries bring: imported contacts are found by name with a typo, by specialty
and by licence type; deactivated ones are not found."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from tests.factories import Factory
from tests.registries.conftest import Importer, shared
from tests.registries.formats import write_nppes

pytestmark = pytest.mark.asyncio


async def _search(client: httpx.AsyncClient, headers: dict[str, str], **params: str) -> list[str]:
    response = await client.get("/api/v1/contacts/search", params=params, headers=headers)
    assert response.status_code == 200, response.text
    return [c["business_name"] for c in response.json()["contacts"]]


async def test_imported_contacts_are_found_by_typo_specialty_and_licence_type(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, run_import: Importer, tmp_path: Path
) -> None:
    await run_import("nucc", shared("nppes", "nucc_taxonomy_150.csv"))
    await run_import("nppes", shared("nppes", "npidata_pfile_sample_k0bl.csv"))
    await run_import("cslb", shared("licenses", "ca_cslb_MasterLicenseData_noheader.csv"))
    headers = (await factory.account()).headers("ro")

    assert "Cumberland County Hospital System, Inc" in await _search(client, headers, q="cumberlnd hospital")
    assert "Nerelli Welding Inc" in await _search(client, headers, q="nerelli weldng")
    cardiology = await _search(client, headers, specialty="cardiovascular", limit="100")
    assert "William C Pilcher, MD" in cardiology
    assert len(cardiology) >= 10
    welders = await _search(client, headers, license_type="welding", state="CA")
    assert "Nerelli Welding Inc" in welders
    plumbers = await _search(client, headers, license_type="C-36 plumbing")
    assert {"Gonzales David Backflow & Plumbing Services Inc", "Drain Kings"} <= set(plumbers)
    solar = await _search(client, headers, industry="solar", state="CA")
    assert {"Roam Solar Inc", "Baker Energy Team LLC"} <= set(solar)
    dentists = await _search(client, headers, industry="dental", license_type="dentist")
    assert dentists and all(name for name in dentists)


async def test_a_deactivated_npi_is_no_longer_found(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, run_import: Importer, tmp_path: Path
) -> None:
    from tests.registries.formats import write_nucc
    from tests.registries.test_nppes import DOCTOR

    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    await run_import("nppes", write_nppes(tmp_path / "a.csv", [DOCTOR]))
    headers = (await factory.account()).headers("ro")
    assert await _search(client, headers, q="nakamura") == ["Kenji T Nakamura, MD"]
    gone = write_nppes(tmp_path / "b.csv", [{"npi": DOCTOR["npi"], "deactivated": "11/02/2026"}])
    await run_import("nppes", gone, file_date=date(2026, 11, 5))
    assert await _search(client, headers, q="nakamura") == []


async def test_an_import_in_batches_leaves_its_contacts_folded_in(
    app: FastAPI, run_import: Importer, tmp_path: Path
) -> None:
    """An import returns with what it wrote in the postings (no backlog left for searches to apply,
    whether or not a worker runs), as a build from the table would have them."""
    from sqlalchemy import text

    from tests.registries.formats import write_nucc
    from tests.registries.test_nppes import DOCTOR

    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    doctors = [
        {**DOCTOR, "npi": str(1987654000 + i), "last": f"NAKAMURA{chr(65 + i)}", "phone": f"50955501{i:02d}"}
        for i in range(20)
    ]
    summary = await run_import("nppes", write_nppes(tmp_path / "a.csv", doctors), mode="batches")
    assert summary.mode == "batches"
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(text("SELECT count(*) FROM search_changes")) == 0
        imported = await session.scalar(text("SELECT count(*) FROM contacts"))
        stored = {row[0] for row in await session.execute(text("SELECT DISTINCT term FROM search_postings"))}
    assert imported and "#a" in stored and "o:spokane" in stored
