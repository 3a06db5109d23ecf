"""What a newcomer notices on the dashboard's pages: amounts with their unit in the singular when it is
one ("for 1 credit"); an icon, so that no page makes the browser ask for a missing /favicon.ico; states
listed in the order of the names shown; the signals table showing when each signal arrived (its
order) besides when it was observed; signal categories and webhook events in words, each event with
what it means; and the guide describing the pages that are there."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi import FastAPI

from tests.dashboard.conftest import Browser
from tests.factories import Factory
from tests.signals.support import event, ingest
from vpx.clock import FixedClock
from vpx.webhooks.events import SUBSCRIBABLE

pytestmark = pytest.mark.asyncio

DOCS = Path(__file__).resolve().parents[2] / "docs" / "dashboard.md"
PAGES = ["/dashboard", "/dashboard/keys", "/dashboard/credits", "/dashboard/contacts", "/dashboard/revealed",
         "/dashboard/signals", "/dashboard/rules", "/dashboard/webhooks"]  # fmt: skip


async def test_one_credit_is_one_credit(web: Browser, factory: Factory) -> None:
    await web.sign_up()
    contact = await factory.contact()
    done = await web.submit(f"/dashboard/contacts/{contact}", f"/dashboard/contacts/{contact}/reveal",
                            {"expected_price": "1"})  # fmt: skip
    assert done.status_code == 303
    page = (await web.get(done.headers["location"])).text
    assert "for 1 credit<" in page and "1 credit charged" in page, page
    for path in PAGES:
        assert not re.search(r"\b1 credits\b", (await web.get(path)).text), path


async def test_every_page_names_an_icon_that_is_there(web: Browser) -> None:
    await web.sign_up()
    for path in [*PAGES, "/dashboard/login"]:
        page = (await web.get(path)).text
        found = re.search(r'<link rel="icon" href="([^"]+)"', page)
        assert found is not None, path
        icon = await web.get(found.group(1))
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/"), path
    # Browsers also ask the site for /favicon.ico on pages that name no icon (the API's docs).
    asked = await web.get("/favicon.ico")
    assert asked.status_code == 200 and asked.headers["content-type"].startswith("image/")


async def test_states_are_in_the_order_of_their_names(web: Browser) -> None:
    await web.sign_up()
    for path in ("/dashboard/contacts", "/dashboard/revealed"):
        page = (await web.get(path)).text
        names = re.findall(r'<option value="[A-Z]{2}"[^>]*>([^<]+) \([A-Z]{2}\)</option>', page)
        assert len(names) > 50 and names == sorted(names), names[:8]
        assert names[:3] == ["Alabama", "Alaska", "American Samoa"]


async def test_the_signals_table_shows_when_each_arrived(
    app: FastAPI, web: Browser, factory: Factory, clock: FixedClock
) -> None:
    await web.sign_up()
    contact = await factory.contact()
    observed = clock.now() - timedelta(days=3)  # seen by its source three days before it arrived
    await ingest(app, [event(contact_id=contact, business=None, observed_at=observed, source_record_id="1")])
    page = (await web.get("/dashboard/signals")).text
    assert '<th scope="col">Arrived</th>' in page and ">Observed<" not in page
    arrived = f"{clock.now():%Y-%m-%d %H:%M} UTC"
    assert re.search(rf'data-label="Arrived"><time datetime="[^"]+">{arrived}</time>', page), page
    assert f'observed <time datetime="{observed.isoformat()}">{observed:%Y-%m-%d %H:%M} UTC</time>' in page
    assert '<td data-label="Category">Switching intent</td>' in page


async def test_categories_and_events_are_in_words(web: Browser) -> None:
    await web.sign_up()
    rules = (await web.get("/dashboard/rules")).text
    for label in ("Switching intent", "BANT-qualified", "Funding and M&amp;A", "Topic surge", "Permit filed",
                  "Technology installed"):  # fmt: skip
        assert f">{label}</label>" in rules, label
    assert "<code>switching_intent</code>" not in rules and 'value="switching_intent"' in rules
    hooks = (await web.get("/dashboard/webhooks")).text
    for number, name in enumerate(SUBSCRIBABLE, start=1):
        hint = re.search(rf'<p class="hint" id="event-{number}-hint">([^<]*)</p>', hooks)
        assert f'value="{name}"' in hooks and hint is not None and hint.group(1).strip(), name


def test_the_guide_describes_the_signals_and_rules_pages() -> None:
    guide = DOCS.read_text()
    assert "not on this server yet" not in guide and "come alive as the capabilities land" not in guide
    rows = {line.split("|")[1].strip(): line for line in guide.splitlines() if line.startswith("| `/dashboard/")}
    assert "Arrived" in rows["`/dashboard/signals`"] and "live" in rows["`/dashboard/signals`"]
    assert "`/dashboard/rules`" in rows
