"""NPPES and NUCC imports: counts, fields checked against the file, re-import, newer files,
deactivation, both layouts."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.registries.conftest import Importer, catalogue_counts, shared
from tests.registries.formats import write_nppes, write_nucc
from vpx.models import Contact, ContactSource, DecisionMaker, TaxonomyCode
from vpx.registries.reader import ImportFailed

pytestmark = pytest.mark.asyncio

CLINIC = {
    "npi": "1234567893", "entity": "2", "org": "SMILE BRIGHT DENTAL, PLLC", "street": "500 MAIN ST",
    "street2": "SUITE 4", "city": "BOISE", "state": "ID", "zip": "837021234", "country": "US",
    "phone": "2085550143", "ao_last": "ORTEGA", "ao_first": "MARIA", "ao_title": "OWNER", "ao_phone": "2085550144",
    "taxonomy1": "122300000X", "licence1": "D-1", "licence_state1": "ID", "switch1": "N",
    "taxonomy2": "1223G0001X", "licence2": "D-4471", "licence_state2": "ID", "switch2": "Y",
}  # fmt: skip
DOCTOR = {
    "npi": "1987654321", "entity": "1", "last": "NAKAMURA", "first": "KENJI", "middle": "T", "credential": "MD",
    "street": "12 ELM AVE", "city": "SPOKANE", "state": "WA", "zip": "99201", "country": "US", "phone": "5095550120",
    "taxonomy1": "207RC0000X", "licence1": "MD60012345", "licence_state1": "WA", "switch1": "Y",
}  # fmt: skip
GONE = {"npi": "1111111112", "deactivated": "02/12/2016"}
ABROAD = {**DOCTOR, "npi": "1222222223", "country": "DE", "state": ""}


async def _contact(app: FastAPI, registry: str, record_id: str) -> Contact:
    async with app.state.database.read_sessions() as session:
        contact = await session.scalar(
            select(Contact)
            .join(ContactSource, ContactSource.contact_id == Contact.id)
            .where(ContactSource.registry_name == registry, ContactSource.record_id == record_id)
        )
        assert contact is not None
        return contact


async def test_nppes_needs_the_taxonomy_first(app: FastAPI, run_import: Importer, tmp_path: Path) -> None:
    with pytest.raises(ImportFailed) as failure:
        await run_import("nppes", write_nppes(tmp_path / "npi.csv", [CLINIC]))
    assert failure.value.code == "taxonomy_missing"


async def test_nucc_loads_both_headers_and_windows_1252(app: FastAPI, run_import: Importer, tmp_path: Path) -> None:
    first = await run_import("nucc", write_nucc(tmp_path / "nucc_15.csv"))
    assert (first.created, first.encoding) == (8, "cp1252")
    again = await run_import("nucc", write_nucc(tmp_path / "nucc_25.csv", newer=True))
    assert (again.created, again.updated, again.unchanged) == (0, 0, 8)
    async with app.state.database.read_sessions() as session:
        code = await session.get(TaxonomyCode, "261QM0801X")
    assert code is not None and code.vertical == "mental-health"
    assert code.specialty == "Clinic/Center, Mental Health (Including Community Mental Health Center)"


async def test_organisations_and_providers_field_by_field(app: FastAPI, run_import: Importer, tmp_path: Path) -> None:
    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    summary = await run_import("nppes", write_nppes(tmp_path / "npi.csv", [CLINIC, DOCTOR, GONE, ABROAD]))
    assert (summary.rows_read, summary.created, summary.merged) == (4, 2, 0)
    assert dict(summary.skipped) == {"deactivated": 1, "foreign_address": 1}

    clinic = await _contact(app, "nppes", CLINIC["npi"])
    assert (clinic.business_name, clinic.street, clinic.city, clinic.state) == (
        "Smile Bright Dental, PLLC", "500 Main St Suite 4", "Boise", "ID",
    )  # fmt: skip
    assert (clinic.postal_code, clinic.phone, clinic.industry) == ("83702-1234", "+12085550143", "dental")
    # The primary taxonomy is group 2 (switch Y), not group 1.
    assert (clinic.specialty, clinic.license_type, clinic.license_number, clinic.license_state) == (
        "Dentist, General Practice", "Dentist", "D-4471", "ID",
    )  # fmt: skip
    doctor = await _contact(app, "nppes", DOCTOR["npi"])
    assert (doctor.business_name, doctor.industry, doctor.specialty, doctor.license_type) == (
        "Kenji T Nakamura, MD", "healthcare", "Internal Medicine, Cardiovascular Disease", "Physician",
    )  # fmt: skip
    async with app.state.database.read_sessions() as session:
        official = (await session.scalars(select(DecisionMaker).where(DecisionMaker.contact_id == clinic.id))).one()
    assert (official.name, official.title, official.role, official.phone) == (
        "Maria Ortega", "Owner", "authorized_official", "+12085550144",
    )  # fmt: skip


async def test_reimport_is_idempotent_and_a_newer_file_updates(
    app: FastAPI, run_import: Importer, tmp_path: Path
) -> None:
    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    path = write_nppes(tmp_path / "npi.csv", [CLINIC, DOCTOR])
    await run_import("nppes", path)
    before = await catalogue_counts(app)
    again = await run_import("nppes", path)
    assert (again.created, again.updated, again.merged, again.unchanged) == (0, 0, 0, 2)
    assert await catalogue_counts(app) == before

    moved = {**CLINIC, "phone": "2085550199", "ao_title": "PRESIDENT"}
    newer = await run_import("nppes", write_nppes(tmp_path / "npi2.csv", [moved, DOCTOR]), file_date=date(2026, 12, 1))
    assert (newer.updated, newer.unchanged, newer.created) == (1, 1, 0)
    clinic = await _contact(app, "nppes", CLINIC["npi"])
    assert clinic.phone == "+12085550199"
    assert await catalogue_counts(app) == before

    older = await run_import("nppes", path, file_date=date(2026, 10, 1))
    assert older.skipped["older_file"] == 2 and (await _contact(app, "nppes", CLINIC["npi"])).phone == "+12085550199"


async def test_a_deactivated_npi_leaves_search_and_comes_back_when_reactivated(
    app: FastAPI, run_import: Importer, tmp_path: Path
) -> None:
    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    await run_import("nppes", write_nppes(tmp_path / "a.csv", [CLINIC, DOCTOR]))
    gone = await run_import(
        "nppes",
        write_nppes(tmp_path / "b.csv", [{"npi": DOCTOR["npi"], "deactivated": "11/02/2026"}]),
        file_date=date(2026, 11, 5),
    )
    assert gone.deactivated == 1
    assert (await _contact(app, "nppes", DOCTOR["npi"])).status == "deactivated"
    back = {**DOCTOR, "deactivated": "11/02/2026", "reactivated": "11/20/2026"}
    await run_import("nppes", write_nppes(tmp_path / "c.csv", [back], layout="current"), file_date=date(2026, 11, 21))
    assert (await _contact(app, "nppes", DOCTOR["npi"])).status == "active"


async def test_the_current_layout_loads_by_header_name(app: FastAPI, run_import: Importer, tmp_path: Path) -> None:
    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    summary = await run_import("nppes", write_nppes(tmp_path / "npi.csv", [CLINIC, DOCTOR], layout="current"))
    assert summary.created == 2 and not summary.skipped


async def test_the_real_nppes_sample(app: FastAPI, run_import: Importer) -> None:
    await run_import("nucc", shared("nppes", "nucc_taxonomy_150.csv"))
    path = shared("nppes", "npidata_pfile_sample_k0bl.csv")
    summary = await run_import("nppes", path)
    # 499 rows: 13 deactivated NPIs (empty entity type) unknown to the catalogue; LabCorp's two NPIs
    # at one address are two providers: two NPIs are a veto, and their shared line is toll-free.
    assert (summary.rows_read, summary.created, summary.merged) == (499, 486, 0)
    assert dict(summary.skipped) == {"deactivated": 13}

    pilcher = await _contact(app, "nppes", "1588667638")  # switch N in group 1, Y in group 2
    assert (pilcher.business_name, pilcher.city, pilcher.state, pilcher.phone) == (
        "William C Pilcher, MD", "Jacksonville", "FL", "+19043881820",
    )  # fmt: skip
    assert (pilcher.license_number, pilcher.license_state, pilcher.specialty) == (
        "ME68414", "FL", "Internal Medicine, Cardiovascular Disease",
    )  # fmt: skip
    hospital = await _contact(app, "nppes", "1497758544")
    assert (hospital.business_name, hospital.street, hospital.postal_code) == (
        "Cumberland County Hospital System, Inc", "3418 Village Dr", "28304-4552",
    )  # fmt: skip
    assert (hospital.industry, hospital.license_number) == ("senior-care", "HC0283")  # hospice, 251G00000X
    labcorp = await _contact(app, "nppes", "1104829159")
    assert labcorp.id != (await _contact(app, "nppes", "1902809940")).id

    before = await catalogue_counts(app)
    again = await run_import("nppes", path)
    assert (again.created, again.updated, again.merged, again.unchanged) == (0, 0, 0, 486)
    assert await catalogue_counts(app) == before
    assert before["contacts_without_source"] == 0
