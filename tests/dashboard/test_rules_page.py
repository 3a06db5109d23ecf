"""The auto-buy rules page (D24): add a rule (errors explained field by field, nothing created),
see what it spent, pause, resume, delete; CSRF required; another account's rules out of reach."""

from __future__ import annotations

import re

import httpx
from fastapi import FastAPI

from tests.dashboard.conftest import Browser
from tests.factories import Factory
from tests.signals.support import event, ingest
from vpx.autobuy import service as rule_service

FORM = {"name": "Denver plumbers", "industries": ["home-services"], "states": "CO, ca", "min_confidence": "0.2"}


async def add(web: Browser, **fields: object) -> httpx.Response:
    token = await web.token("/dashboard/rules")
    return await web.http.post("/dashboard/rules", data={"csrf_token": token, **FORM, **fields})


def rule_id(page: str) -> str:
    found = re.search(r'data-rule-id="(abr_[0-9A-Za-z]+)"', page)
    assert found, "no rule on the page"
    return found.group(1)


async def test_add_a_rule_and_see_it_buy(web: Browser, app: FastAPI) -> None:
    await web.sign_up()
    created = await add(web, budget_credits="10", daily_cap="5")
    assert created.status_code == 201, created.text
    assert "Denver plumbers" in created.text and "home-services in CO, CA" in created.text
    assert "0 of 5 contacts" in created.text and "0 of 10 credits" in created.text
    factory = Factory(app, app.state.clock)
    ct = await factory.contact()
    await ingest(app, [event(contact_id=ct, business=None, source_record_id="r1")])
    page = (await web.get("/dashboard/rules")).text
    assert "1 of 5 contacts, 1 credit<" in page and "1 contact, 1 of 10 credits" in page  # one credit, one contact


async def test_errors_are_explained_and_nothing_is_created(web: Browser) -> None:
    await web.sign_up()
    refused = await add(web, states="ZZ", min_confidence="7", industries=[])
    assert refused.status_code == 422
    text = refused.text
    assert "ZZ" in text and "two-letter" in text and "must be at most 1" in text
    assert "No rules yet." in text


async def test_pause_resume_delete(web: Browser) -> None:
    await web.sign_up()
    page = (await add(web)).text
    rid = rule_id(page)
    token = await web.token("/dashboard/rules")
    paused = await web.http.post(f"/dashboard/rules/{rid}/pause", data={"csrf_token": token})
    assert paused.status_code == 303
    listed = (await web.get(paused.headers["location"])).text
    assert "Paused (paused by the account)" in listed and "The rule is paused." in listed
    resumed = await web.http.post(f"/dashboard/rules/{rid}/resume", data={"csrf_token": token})
    assert resumed.status_code == 303 and "Active" in (await web.get("/dashboard/rules")).text
    gone = await web.http.post(f"/dashboard/rules/{rid}/delete", data={"csrf_token": token})
    assert gone.status_code == 303 and "No rules yet." in (await web.get("/dashboard/rules")).text


async def test_csrf_is_required(web: Browser) -> None:
    await web.sign_up()
    refused = await web.http.post("/dashboard/rules", data=FORM)
    assert refused.status_code == 403
    assert "No rules yet." in (await web.get("/dashboard/rules")).text


async def test_another_accounts_rule_is_out_of_reach(web: Browser, app: FastAPI) -> None:
    await web.sign_up()
    rid = rule_id((await add(web)).text)
    await web.http.post("/dashboard/sign-out", data={"csrf_token": await web.token("/dashboard/rules")})
    await web.sign_up(email="other@example.com")
    token = await web.token("/dashboard/rules")
    for action in ("pause", "resume", "delete"):
        response = await web.http.post(f"/dashboard/rules/{rid}/{action}", data={"csrf_token": token})
        assert response.status_code == 404, action
    assert rid not in (await web.get("/dashboard/rules")).text
    async with app.state.database.read_sessions() as session:
        rule = await session.get(rule_service.AutoBuyRule, rid)
    assert rule is not None and rule.status == "active"
