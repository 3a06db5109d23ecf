"""Do-Not-Call on phones: the registry's files in both flat layouts and as change lists (idempotent),
``phone_dnc`` on every revealed phone (both reveal paths), the 31-day rule with a fake clock,
``exclude_dnc`` on batch reveals and auto-buy rules, and a person's own do-not-call request on the
phone channel only."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from tests.autobuy.support import create_rule, purchases_of, signal_for
from tests.compliance.support import audit_kinds, contact
from tests.factories import Factory, details
from vpx.clock import FixedClock
from vpx.compliance.dnc import service as dnc_service
from vpx.compliance.dnc.files import DncFileError

pytestmark = pytest.mark.asyncio
LISTED, CLEAR, ELSEWHERE = "+12025550100", "+12025550199", "+14155550100"


async def load(app: FastAPI, path: Path, mode: str, version: date, codes: list[str] | None = None) -> dict[str, object]:
    report = await dnc_service.import_file(
        app.state.database,
        path,
        mode=mode,
        version_date=version,
        area_codes=codes,
        now=app.state.clock.now(),  # type: ignore[arg-type]
    )
    return report.as_dict()


async def catalogue(factory: Factory) -> dict[str, str]:
    return {
        phone: await factory.contact(business_name=f"Dnc Test {n}", **{**details(n), "phone": phone})
        for n, phone in enumerate((LISTED, CLEAR, ELSEWHERE), start=20)
    }


async def revealed_dnc(client: httpx.AsyncClient, factory: Factory, contact_id: str) -> object:
    account = await factory.account(credits=20)
    answer = await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())
    assert answer.status_code == 200, answer.text
    return answer.json()["phone_dnc"]


async def test_full_lists_in_both_layouts_and_change_lists(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, tmp_path: Path
) -> None:
    ids = await catalogue(factory)
    one_a_line = tmp_path / "202.txt"
    one_a_line.write_text("2025550100\n(202) 555-0101\n12025550102\n")
    report = await load(app, one_a_line, "full", date(2026, 11, 10))
    assert report["area_codes"] == [{"area_code": "202", "numbers": 3, "fresh": True, "contacts_updated": 2}]
    # Area code and number in two fields, a header, and an area code with nothing listed.
    two_fields = tmp_path / "303.csv"
    two_fields.write_text("AreaCode,PhoneNumber\n303,5550100\n303,5550111\n")
    report = await load(app, two_fields, "full", date(2026, 11, 10), ["303", "720"])
    assert [(a["area_code"], a["numbers"]) for a in report["area_codes"]] == [("303", 2), ("720", 0)]  # type: ignore[index, union-attr]

    assert (await contact(app, ids[LISTED])).phone_dnc == "listed"
    assert (await contact(app, ids[CLEAR])).phone_dnc == "clear"
    assert (await contact(app, ids[ELSEWHERE])).phone_dnc == "unknown"
    assert await revealed_dnc(client, factory, ids[LISTED]) == {
        "listed": True, "registry_date": "2026-11-10", "requested": False
    }  # fmt: skip
    assert await revealed_dnc(client, factory, ids[CLEAR]) == {
        "listed": False, "registry_date": "2026-11-10", "requested": False
    }  # fmt: skip
    assert await revealed_dnc(client, factory, ids[ELSEWHERE]) == {
        "listed": None, "registry_date": None, "requested": False
    }  # fmt: skip

    changes = tmp_path / "changes.txt"
    changes.write_text("2025550199,2026-11-12,A\nD|202|5550100|11/12/2026\n")
    for _ in range(2):  # the same file twice: the same state
        report = await load(app, changes, "changes", date(2026, 11, 12))
        assert [(a["area_code"], a["numbers"]) for a in report["area_codes"]] == [("202", 3)]  # type: ignore[index, union-attr]
    assert (await contact(app, ids[LISTED])).phone_dnc == "clear"
    assert (await contact(app, ids[CLEAR])).phone_dnc == "listed"
    again = await load(app, one_a_line, "full", date(2026, 11, 12))
    assert again["area_codes"][0]["numbers"] == 3  # type: ignore[index]
    assert (await contact(app, ids[CLEAR])).phone_dnc == "clear"
    assert (await audit_kinds(app)).count("dnc.imported") == 6


async def test_files_it_cannot_take_are_refused_with_nothing_written(app: FastAPI, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    cases = [
        ("2025550100\n20255501\n", "full", "line 2"),
        ("2025550100,D\n", "full", "no delete marks"),
        ("2025550100\n", "changes", "no add or delete mark"),
        ("4155550100,A\n", "changes", "no full list was imported for 415"),
        ("2025550100\nhello there\n", "full", "line 2"),
    ]
    for text, mode, said in cases:
        bad.write_text(text)
        with pytest.raises(DncFileError, match=said):
            await load(app, bad, mode, date(2026, 11, 10))
    good = tmp_path / "good.txt"
    good.write_text("2025550100\n")
    await load(app, good, "full", date(2026, 11, 10))
    with pytest.raises(DncFileError, match="newer than 2026-11-01"):
        await load(app, good, "full", date(2026, 11, 1))
    async with app.state.database.read_sessions() as session:
        assert [a["area_code"] for a in await dnc_service.area_codes(session, now=app.state.clock.now())] == ["202"]


async def test_the_31_day_rule_with_a_fake_clock(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, clock: FixedClock, tmp_path: Path
) -> None:
    ids = await catalogue(factory)
    listed = tmp_path / "202.txt"
    listed.write_text("2025550100\n")
    version = clock.now().date() - timedelta(days=5)
    await load(app, listed, "full", version)
    clock.set(clock.now() + timedelta(days=26))  # 31 days after the version: still usable
    assert (await revealed_dnc(client, factory, ids[LISTED]))["listed"] is True  # type: ignore[index]
    assert await dnc_service.refresh_freshness(app.state.database, now=clock.now()) == []
    clock.set(clock.now() + timedelta(days=1))  # 32 days: too old to screen a call
    assert await revealed_dnc(client, factory, ids[LISTED]) == {
        "listed": None,
        "registry_date": None,
        "requested": False,
    }
    assert (await contact(app, ids[LISTED])).phone_dnc == "listed"  # until the worker's round
    assert await dnc_service.refresh_freshness(app.state.database, now=clock.now()) == ["202"]
    assert (await contact(app, ids[LISTED])).phone_dnc == "unknown"
    assert (await contact(app, ids[CLEAR])).phone_dnc == "unknown"
    assert "dnc.aged_out" in await audit_kinds(app)
    async with app.state.database.read_sessions() as session:
        [area] = await dnc_service.area_codes(session, now=clock.now())
    assert (area["fresh"], area["age_days"], area["usable_until"]) == (False, 32, version + timedelta(days=31))
    # Fresh data again: back to listed.
    await load(app, listed, "full", clock.now().date())
    assert (await contact(app, ids[LISTED])).phone_dnc == "listed"


async def test_exclude_dnc_leaves_out_phones_that_may_not_be_called(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, tmp_path: Path
) -> None:
    ids = await catalogue(factory)
    no_phone = await factory.contact(business_name="Dnc Test Email Only", **{**details(30), "phone": None})
    listed = tmp_path / "202.txt"
    listed.write_text("2025550100\n")
    await load(app, listed, "full", app.state.clock.now().date())
    account = await factory.account(credits=50)
    wanted = [ids[LISTED], ids[CLEAR], ids[ELSEWHERE], no_phone]
    answer = await client.post(
        "/api/v1/contacts/batch-reveal", json={"contact_ids": wanted, "exclude_dnc": True}, headers=account.headers()
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    statuses = {r["contact_id"]: (r["status"], r["credits_charged"]) for r in body["results"]}
    assert statuses == {
        ids[LISTED]: ("do_not_call", 0),
        ids[CLEAR]: ("revealed", 1),
        ids[ELSEWHERE]: ("do_not_call", 0),  # its area code's data is not held: not known callable
        no_phone: ("revealed", 0.75),
    }
    assert body["counts"] == {"do_not_call": 2, "revealed": 2}
    revealed = next(r for r in body["results"] if r["contact_id"] == ids[CLEAR])
    assert revealed["contact"]["phone_dnc"]["listed"] is False
    # Without the flag the batch reveals them all, each phone flagged.
    other = await factory.account(credits=50)
    plain = await client.post("/api/v1/contacts/batch-reveal", json={"contact_ids": wanted}, headers=other.headers())
    flags = {r["contact_id"]: r["contact"]["phone_dnc"] for r in plain.json()["results"]}
    assert flags[ids[LISTED]]["listed"] is True and flags[no_phone] is None


async def test_an_auto_buy_rule_can_leave_out_do_not_call_phones(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, tmp_path: Path
) -> None:
    ids = await catalogue(factory)
    listed = tmp_path / "202.txt"
    listed.write_text("2025550100\n")
    await load(app, listed, "full", app.state.clock.now().date())
    account = await factory.account(credits=50)
    rule = await create_rule(client, account.headers("full"), exclude_dnc=True)
    assert rule["exclude_dnc"] is True
    await signal_for(app, ids[LISTED], record="dnc-1")
    await signal_for(app, ids[CLEAR], record="dnc-2")
    bought = await purchases_of(app, account.id)
    assert [f"ct_{p.contact_id}" for p in bought] == [ids[CLEAR]]
    updated = await client.patch(
        f"/api/v1/buyer/auto-buy/rules/{rule['id']}", json={"exclude_dnc": False}, headers=account.headers("full")
    )
    assert updated.json()["exclude_dnc"] is False


async def test_a_persons_own_do_not_call_request_is_the_phone_channel_only(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, tmp_path: Path
) -> None:
    ids = await catalogue(factory)
    await factory.suppress("do_not_call", CLEAR, reason="do_not_call")
    assert (await contact(app, ids[CLEAR])).phone_dnc == "requested"
    assert not (await contact(app, ids[CLEAR])).suppressed  # still on sale
    flag = await revealed_dnc(client, factory, ids[CLEAR])
    assert flag == {"listed": None, "registry_date": None, "requested": True}
    listed = tmp_path / "202.txt"
    listed.write_text("2025550100\n")
    await load(app, listed, "full", app.state.clock.now().date())
    assert (await contact(app, ids[CLEAR])).phone_dnc == "requested"  # the person's word wins
    assert (await revealed_dnc(client, factory, ids[CLEAR]))["listed"] is False  # type: ignore[index]
    # A contact given that phone later is flagged too (the trigger).
    later = await factory.contact(business_name="Dnc Test Later", **{**details(40), "phone": CLEAR})
    assert (await contact(app, later)).phone_dnc == "requested"
    account = await factory.account(credits=10)
    answer = await client.post(
        "/api/v1/contacts/batch-reveal", json={"contact_ids": [later], "exclude_dnc": True}, headers=account.headers()
    )
    assert answer.json()["results"][0]["status"] == "do_not_call"
