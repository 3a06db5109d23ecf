"""A registry update that replaces a phone, email, website or address of a contact tells every account
that revealed it (contact.corrected, replaced, a real receiver); an unchanged re-import, or a contact
nobody revealed tells nobody."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.factories import Factory
from tests.quality.support import buyer, corrected, reveal
from tests.registries.conftest import Importer, run_import
from tests.registries.formats import write_nppes, write_nucc
from tests.registries.test_nppes import CLINIC, DOCTOR
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round, deliveries
from vpx.models import ContactSource

__all__ = ["run_import"]  # the import fixture
pytestmark = pytest.mark.asyncio


async def contact_of(app: FastAPI, npi: str) -> str:
    async with app.state.database.read_sessions() as session:
        number = await session.scalar(
            select(ContactSource.contact_id).where(
                ContactSource.registry_name == "nppes", ContactSource.record_id == npi
            )
        )
    assert number is not None
    return f"ct_{number}"


async def test_a_registry_update_replacing_a_field_tells_its_buyers(
    app: FastAPI,
    client: httpx.AsyncClient,
    factory: Factory,
    receiver: Receiver,
    run_import: Importer,
    tmp_path: Path,
) -> None:
    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    await run_import("nppes", write_nppes(tmp_path / "a.csv", [CLINIC, DOCTOR]))
    clinic = await contact_of(app, CLINIC["npi"])
    first, second = [await buyer(client, factory, receiver, n) for n in ("first", "second")]
    await buyer(client, factory, receiver, "onlooker")
    for account in (first, second):
        await reveal(client, account, clinic)

    unchanged = await run_import(
        "nppes", write_nppes(tmp_path / "b.csv", [CLINIC, DOCTOR]), file_date=date(2026, 11, 2)
    )
    assert unchanged.unchanged == 2
    # The doctor (nobody revealed it) moves too: nobody is told about it.
    moved = [{**CLINIC, "phone": "2085550199", "street": "9 OAK ST"}, {**DOCTOR, "phone": "5095550999"}]
    updated = await run_import("nppes", write_nppes(tmp_path / "c.csv", moved), file_date=date(2026, 12, 1))
    assert updated.updated == 2
    await deliver_round(app)
    for name in ("first", "second"):
        [event] = corrected(receiver, f"/{name}")
        assert event["data"]["contact_id"] == clinic
        assert (event["data"]["fields"], event["data"]["change"], event["data"]["reason"]) == (
            ["phone", "address"],
            "replaced",
            "registry_update",
        )
    assert corrected(receiver, "/onlooker") == []
    assert len(await deliveries(app)) == 2
    shown = (await client.get(f"/api/v1/contacts/{clinic}", headers=first.headers("ro"))).json()
    assert shown["phone"] == "+12085550199"
