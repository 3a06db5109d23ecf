"""A person deleted through DROP stays deleted: re-imported from an NPPES or CSLB file (unchanged,
changed, or as a new record with the same phone), nothing personal of theirs is written again, and
they are never searched, previewed or revealed."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.compliance.fake_drop import FakeDrop
from tests.compliance.support import contact, entries, pull, report
from tests.factories import Factory
from tests.registries.conftest import Importer
from tests.registries.formats import write_cslb, write_nppes, write_nucc
from tests.registries.test_cslb_edgar import SOLAR
from tests.registries.test_nppes import CLINIC, DOCTOR
from vpx.compliance.erasure import TOMBSTONE
from vpx.compliance.hashing import email_hash, phone_hash
from vpx.models import Contact, ContactSource, DecisionMaker

pytestmark = pytest.mark.asyncio


async def contact_of(app: FastAPI, registry: str, record_id: str) -> str:
    async with app.state.database.read_sessions() as session:
        number = await session.scalar(
            select(ContactSource.contact_id).where(
                ContactSource.registry_name == registry, ContactSource.record_id == record_id
            )
        )
    assert number is not None
    return f"ct_{number}"


def assert_erased(found: Contact) -> None:
    assert found.business_name == TOMBSTONE and found.suppressed
    personal = (found.phone, found.email, found.street, found.postal_code, found.website, found.identifiers)
    assert personal == (None,) * 6
    assert (found.email_hash, found.phone_hash, found.license_number) == (None, None, None)


async def test_a_person_deleted_through_drop_stays_deleted_when_registries_bring_them_back(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, drop: FakeDrop, run_import: Importer, tmp_path: Path
) -> None:
    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    await run_import("nppes", write_nppes(tmp_path / "a.csv", [CLINIC, DOCTOR]))
    await run_import("cslb", write_cslb(tmp_path / "a.txt", [SOLAR]))
    doctor = await contact_of(app, "nppes", DOCTOR["npi"])
    solar = await contact_of(app, "cslb", SOLAR["LicenseNo"])
    clinic = await contact_of(app, "nppes", CLINIC["npi"])

    drop.offer({"Phone": [("DoctorPhone1", phone_hash(DOCTOR["phone"])), ("SolarPhone01", phone_hash("5595550101"))]})
    await pull(app, drop)
    await report(app, drop)
    assert drop.answers == {"DoctorPhone1": "3", "SolarPhone01": "3"}
    for erased in (doctor, solar):
        assert_erased(await contact(app, erased))
    assert (await contact(app, clinic)).phone == "+12085550143"  # nobody else is touched

    # The same files again (unchanged records are skipped), then changed ones (a new street, a new
    # name spelling): nothing personal is written back.
    await run_import("nppes", write_nppes(tmp_path / "b.csv", [CLINIC, DOCTOR]), file_date=date(2026, 11, 2))
    moved = {**DOCTOR, "street": "99 NEW RD", "first": "KENJI T"}
    updated = await run_import("nppes", write_nppes(tmp_path / "c.csv", [CLINIC, moved]), file_date=date(2026, 12, 1))
    assert updated.updated == 1
    moved_solar = {**SOLAR, "MailingAddress": "1 OTHER WAY", "LastUpdate": "12/01/2026"}
    await run_import("cslb", write_cslb(tmp_path / "b.txt", [moved_solar]), file_date=date(2026, 12, 1))
    for erased in (doctor, solar):
        assert_erased(await contact(app, erased))

    # A new record (another NPI) with the deleted phone: erased as it is written, and kept so.
    twin = {**DOCTOR, "npi": "1555555556", "last": "NAKAMURA-ITO", "street": "1 FAR ST"}
    await run_import("nppes", write_nppes(tmp_path / "d.csv", [twin]), file_date=date(2026, 12, 2))
    newcomer = await contact_of(app, "nppes", "1555555556")
    assert newcomer != doctor
    assert_erased(await contact(app, newcomer))
    assert ("contact", newcomer, "drop_deletion") in await entries(app)
    changed_twin = {**twin, "street": "2 FAR ST", "phone": "5095550999"}  # even with another phone now
    await run_import("nppes", write_nppes(tmp_path / "e.csv", [changed_twin]), file_date=date(2026, 12, 3))
    assert_erased(await contact(app, newcomer))

    async with app.state.database.read_sessions() as session:
        people = await session.scalar(
            select(func.count())
            .select_from(DecisionMaker)
            .where(DecisionMaker.contact_id.in_([int(c[3:]) for c in (doctor, solar, newcomer)]))
        )
    assert people == 0
    account = await factory.account(credits=20)
    for erased in (doctor, solar, newcomer):
        refused = await client.post(f"/api/v1/contacts/{erased}/reveal", headers=account.headers())
        assert refused.status_code == 451
        assert (await client.get(f"/api/v1/contacts/{erased}", headers=account.headers())).status_code == 404
    found = await client.get("/api/v1/contacts/search", params={"q": "nakamura"}, headers=account.headers())
    assert found.json()["total"] == 0


async def test_an_email_deleted_through_drop_before_it_was_ever_imported_is_never_sold(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, drop: FakeDrop
) -> None:
    drop.offer({"Email": [("FutureMail01", email_hash(" Future.Person@Example.com "))]})
    await pull(app, drop)
    await report(app, drop)
    assert drop.answers == {"FutureMail01": "5"}
    later = await factory.contact(business_name="Future Person Therapy", email="future.person@example.com")
    assert_erased(await contact(app, later))
    account = await factory.account(credits=20)
    assert (await client.post(f"/api/v1/contacts/{later}/reveal", headers=account.headers())).status_code == 451
