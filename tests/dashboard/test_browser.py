"""The dashboard in a real browser: Debian's headless Chromium, driven by Playwright, against a real
uvicorn server. Sign up, create a key, see its secret once, use it, revoke it (401), reveal a contact
and see the balance fall; phone width and keyboard use. Screenshots go to artifacts/screenshots/.

Skipped, with the reason, where /usr/bin/chromium or Playwright is missing (`make test` installs both).
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.dashboard.conftest import PASSWORD, issue_confirmation
from tests.dashboard.live_server import LiveServer, live_server
from tests.factories import Factory
from tests.signals.support import event, ingest

pytestmark = pytest.mark.asyncio

CHROMIUM = os.environ.get("VPX_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
PAGES = ["/dashboard", "/dashboard/keys", "/dashboard/credits", "/dashboard/contacts?q=plumbing", "/dashboard/revealed"]
PAGES += ["/dashboard/signals", "/dashboard/rules", "/dashboard/webhooks"]


def _why_no_browser() -> str | None:
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM}: install Debian's chromium package (make test does)"
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (it is in the dev extras)"
    return None


@pytest.fixture(scope="module")
def running_server(database_url: str) -> Iterator[LiveServer]:
    """One server per database for the module; each test still starts from an emptied database."""
    reason = _why_no_browser()
    if reason:
        pytest.skip(reason)
    with live_server(
        database_url,
        dashboard_plain_http="1",
        login_rate_limit="1000/minute",
        signup_rate_limit="1000/minute",
        mail_to_log="1",
    ) as running:
        yield running


@pytest.fixture
def server(app: Any, running_server: LiveServer) -> LiveServer:
    return running_server


@pytest.fixture(scope="module")
async def browser(running_server: LiveServer) -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()


async def shot(page: Any, backend: str, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SCREENSHOTS / f"{backend}-{name}.png"), full_page=True)


async def balance(page: Any) -> str:
    return str(await page.inner_text("[data-testid=balance]"))


ConfirmLink = Callable[[str], Awaitable[str]]


async def sign_up(page: Any, server: LiveServer, confirm_link: ConfirmLink) -> str:
    """Signs up, follows the confirmation link ``confirm_link`` gives for the address, and confirms
    with the password, which signs in."""
    email = f"buyer-{uuid.uuid4().hex[:8]}@example.com"
    await page.goto(server.url + "/dashboard/signup")
    await page.get_by_label("Email address").fill(email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Create account").click()
    await page.get_by_role("heading", name="Check your email").wait_for()
    await page.goto(await confirm_link(email))
    assert email in await page.inner_text("main")
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Confirm and sign in").click()
    await page.wait_for_url(re.compile(r"/dashboard\?welcome=1$"))
    return email


@pytest.fixture
def confirm_link(app: FastAPI, running_server: LiveServer) -> ConfirmLink:
    """This server writes its emails to its log: a new link is issued as signing in would send one."""

    async def link(email: str) -> str:
        token = await issue_confirmation(app, email, datetime.now(UTC))  # the live server's real time
        return f"{running_server.url}/dashboard/confirm?token={token}"

    return link


async def test_the_whole_journey(
    server: LiveServer, browser: Any, factory: Factory, backend: str, tmp_path: Path, confirm_link: ConfirmLink
) -> None:
    contact = await factory.contact()
    context = await browser.new_context(accept_downloads=True)
    await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    page = await context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())

    # Signed out, the dashboard sends the browser to sign in.
    await page.goto(server.url + "/dashboard/keys")
    assert "/dashboard/login?next=/dashboard/keys" in page.url
    await shot(page, backend, "01-sign-in")
    await page.get_by_role("link", name="Create a free account").click()
    await shot(page, backend, "02-sign-up")

    # Sign up on the free plan: no card, 25 credits.
    email = await sign_up(page, server, confirm_link)
    assert await balance(page) == "25"
    assert "Welcome to vpx" in await page.inner_text("main")
    await shot(page, backend, "03-overview")

    # Create a Full Access key; its secret is shown once, with a copy button.
    await page.get_by_role("link", name="API keys").click()
    await page.get_by_label("Full Access").check()
    await page.get_by_label("Name", exact=True).fill("CI key")
    await page.get_by_role("button", name="Create key").click()
    secret = await page.input_value("[data-testid=secret]")
    assert secret.startswith("vpx_full_")
    await page.get_by_role("button", name="Copy key").click()
    await page.wait_for_function("document.getElementById('copy-status').textContent.includes('Copied')")
    assert await page.evaluate("navigator.clipboard.readText()") == secret
    await shot(page, backend, "04-key-created")

    # The key works against the API, as this account.
    async with httpx.AsyncClient(base_url=server.url) as api:
        account = await api.get("/api/v1/account", headers={"X-API-Key": secret})
        assert account.status_code == 200 and account.json()["email"] == email

        # Never shown again.
        await page.get_by_role("link", name="Done, back to the keys").click()
        assert secret not in await page.content()
        assert "CI key" in await page.inner_text("table")
        await shot(page, backend, "05-keys")

        # Revoke it (the page asks for confirmation): the API now answers 401.
        await page.get_by_role("button", name="Revoke CI key").click()
        await page.wait_for_url(re.compile(r"done=revoked"))
        assert "Revoked" in await page.inner_text("table")
        refused = await api.get("/api/v1/account", headers={"X-API-Key": secret})
        assert refused.status_code == 401 and refused.json()["code"] == "invalid_api_key"

    # Search, see the price before paying, reveal, and see the balance fall.
    await page.get_by_role("link", name="Contacts", exact=True).click()
    await page.get_by_label("Business name, category or keyword").fill("plumbing")
    await page.get_by_role("button", name="Search").click()
    await shot(page, backend, "06-contacts")
    await page.get_by_role("link", name="Reveal… Acme Plumbing LLC").click()
    assert await page.inner_text("[data-testid=price]") == "1 credit"
    assert "+13035550100" not in await page.content()
    await shot(page, backend, "07-reveal-price")
    await page.get_by_role("button", name="Reveal for 1 credit").click()
    await page.wait_for_url(re.compile(rf"/dashboard/contacts/{contact}\?revealed=1$"))
    assert "+13035550100" in await page.inner_text("[data-testid=revealed]")
    assert await balance(page) == "24"
    await shot(page, backend, "08-revealed-contact")

    # The revealed contacts, and their CSV.
    await page.get_by_role("link", name="Revealed", exact=True).click()
    await shot(page, backend, "09-revealed")
    async with page.expect_download() as download_info:
        await page.get_by_role("link", name="Download CSV of these revealed contacts").click()
    download = await download_info.value
    target = tmp_path / "contacts.csv"
    await download.save_as(target)
    rows = list(csv.DictReader(io.StringIO(target.read_text("utf-8"), newline="")))
    assert [(r["id"], r["phone"]) for r in rows] == [(contact, "+13035550100")]

    # The credits page: the ledger with its running balance, and the spending chart.
    await page.get_by_role("link", name="Credits").click()
    ledger = await page.inner_text("table.ledger")
    assert "reveal" in ledger and "-1" in ledger and "24" in ledger
    assert await page.locator("svg rect.bar").count() == 30
    await shot(page, backend, "10-credits")

    for path, name in (("/dashboard/signals", "11-signals"), ("/dashboard/rules", "12-rules")):
        await page.goto(server.url + path)
        await shot(page, backend, name)
    await page.goto(server.url + "/dashboard/webhooks")
    await shot(page, backend, "13-webhooks")

    # Sign out: the pages need signing in again.
    await page.get_by_role("button", name=re.compile("Sign out")).click()
    await page.wait_for_url(re.compile(r"/dashboard/login$"))
    await page.goto(server.url + "/dashboard/credits")
    assert "/dashboard/login" in page.url
    await context.close()


async def test_every_page_fits_a_phone(
    server: LiveServer, browser: Any, factory: Factory, backend: str, confirm_link: ConfirmLink
) -> None:
    contact = await factory.contact()
    context = await browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    page = await context.new_page()
    await sign_up(page, server, confirm_link)
    await page.goto(server.url + "/dashboard/keys")
    await page.get_by_label("Name", exact=True).fill("Phone key")
    await page.get_by_role("button", name="Create key").click()
    await page.goto(server.url + f"/dashboard/contacts/{contact}")
    await page.get_by_role("button", name="Reveal for 1 credit").tap()
    await page.wait_for_url(re.compile(r"revealed=1$"))
    for path in PAGES:
        await page.goto(server.url + path)
        overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{path} is {overflow}px wider than a phone"
        name = path.strip("/").split("?")[0].replace("/", "-")
        await shot(page, backend, f"phone-{name}")
    await context.close()


async def test_sign_in_with_the_keyboard_alone(
    server: LiveServer, browser: Any, backend: str, confirm_link: ConfirmLink
) -> None:
    context = await browser.new_context()
    page = await context.new_page()
    email = await sign_up(page, server, confirm_link)
    await page.get_by_role("button", name=re.compile("Sign out")).click()
    await page.wait_for_url(re.compile(r"/dashboard/login$"))

    await page.keyboard.press("Tab")
    assert await page.evaluate("document.activeElement.textContent") == "Skip to content"
    assert await page.locator(".skip-link").is_visible()
    await page.keyboard.press("Enter")
    for _ in range(10):
        await page.keyboard.press("Tab")
        if await page.evaluate("document.activeElement.id") == "email":
            break
    await page.keyboard.type(email)
    await page.keyboard.press("Tab")
    assert await page.evaluate("document.activeElement.id") == "password"
    await page.keyboard.type(PASSWORD)
    await page.keyboard.press("Enter")
    await page.wait_for_url(re.compile(r"/dashboard$"))
    # Focus is visible: the focused element gets an outline.
    await page.keyboard.press("Tab")
    outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"
    await shot(page, backend, "keyboard-focus")
    await context.close()


async def test_the_live_list_adds_only_signals_the_table_does_not_show(
    app: FastAPI, server: LiveServer, browser: Any, factory: Factory, backend: str, confirm_link: ConfirmLink
) -> None:
    """Signals that came while nobody watched are in the table, not repeated in the live list below it;
    one that arrives while the page is open is added once, its category in words."""
    contact = await factory.contact()
    context = await browser.new_context()
    page = await context.new_page()
    await sign_up(page, server, confirm_link)
    await page.goto(server.url + "/dashboard/signals")
    await page.locator("#feed-status", has_text="Live:").wait_for()  # (a CSP page: no wait_for_function)
    await page.goto(server.url + "/dashboard")  # left: its stream closes
    await ingest(app, [event(contact_id=contact, business=None, topic=f"earlier {n}", source_record_id=str(n))
                       for n in (1, 2)])  # fmt: skip
    await page.wait_for_timeout(1500)  # the server's stream poll (0.5 s) has come round meanwhile
    await page.goto(server.url + "/dashboard/signals")
    assert await page.locator("#latest-signals tbody tr").count() == 2
    await page.locator("#feed-status", has_text="Live:").wait_for()  # (a CSP page: no wait_for_function)
    await ingest(app, [event(contact_id=contact, business=None, category="tech_install", topic="new one",
                             evidence={"technology": "Jobber"}, source_record_id="3")])  # fmt: skip
    await page.locator("#signal-feed li").first.wait_for()
    await page.wait_for_timeout(1000)  # anything else the stream would add
    items = await page.locator("#signal-feed li").all_inner_texts()
    assert len(items) == 1 and items[0].startswith("Technology installed"), items
    await shot(page, backend, "14-signals-live")
    await context.close()
