"""Password reset in a real browser (Debian's headless Chromium, Playwright) against a real uvicorn
server that mails through a real SMTP server on loopback: "Forgot password?" on the sign-in page, the
email, its link, a new password, then the sign-in page saying so, and signing in with the new password.

Skipped, with the reason, where /usr/bin/chromium or Playwright is missing, as test_browser.py is.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from tests.dashboard.live_server import LiveServer, free_port, live_server
from tests.dashboard.test_browser import CHROMIUM, CHROMIUM_ARGS, _why_no_browser, shot, sign_up
from tests.sequences.smtp_server import SmtpSink

pytestmark = pytest.mark.asyncio

NEW_PASSWORD = "a brand new passphrase"
LINK = re.compile(r"http://127\.0\.0\.1:\d+/dashboard/reset\?token=[A-Za-z0-9_-]+")
CONFIRM_LINK = re.compile(r"http://127\.0\.0\.1:\d+/dashboard/confirm\?token=[A-Za-z0-9_-]+")


@pytest.fixture(scope="module")
def sink() -> Iterator[SmtpSink]:
    with SmtpSink() as running:
        yield running


@pytest.fixture(scope="module")
def mailing_server(database_url: str, sink: SmtpSink) -> Iterator[LiveServer]:
    reason = _why_no_browser()
    if reason:
        pytest.skip(reason)
    port = free_port()
    with live_server(
        database_url,
        port=port,
        public_url=f"http://127.0.0.1:{port}",
        smtp_url=f"smtp://127.0.0.1:{sink.port}",
        dashboard_plain_http="1",
        login_rate_limit="1000/minute",
        signup_rate_limit="1000/minute",
    ) as running:
        yield running


@pytest.fixture
def server(app: Any, mailing_server: LiveServer) -> LiveServer:
    return mailing_server  # ``app`` empties the database first


@pytest.fixture(scope="module")
async def chromium(mailing_server: LiveServer) -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


def wait_for_link(sink: SmtpSink, recipient: str, link: re.Pattern[str] = LINK, limit_s: float = 10.0) -> str:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        for received in list(sink.received):
            found = link.search(received.message().get_content())
            if received.recipients == [recipient] and found:
                return found.group(0)
        time.sleep(0.05)
    raise AssertionError(f"no email to {recipient} with a link like {link.pattern} within {limit_s} s")


async def test_forgot_password_by_email_in_a_browser(
    server: LiveServer, chromium: Any, sink: SmtpSink, backend: str
) -> None:
    # Signed in in one browser; the password forgotten in another.
    signed_in = await chromium.new_context()
    first = await signed_in.new_page()

    async def mailed_confirmation(email: str) -> str:
        return wait_for_link(sink, email, CONFIRM_LINK)

    email = await sign_up(first, server, mailed_confirmation)
    context = await chromium.new_context()
    page = await context.new_page()

    await page.goto(server.url + "/dashboard/login")
    await page.get_by_role("link", name="Forgot password?").click()
    await page.wait_for_url(re.compile(r"/dashboard/forgot$"))
    await page.get_by_label("Email address").fill(email)
    await page.get_by_role("button", name="Email me a reset link").click()
    await page.get_by_role("heading", name="Check your email").wait_for()
    await shot(page, backend, "reset-1-sent")

    link = wait_for_link(sink, email)
    await page.goto(link)
    assert email in await page.inner_text("main")
    await page.get_by_label("New password").fill(NEW_PASSWORD)
    await page.get_by_role("button", name="Set new password").click()

    # Chosen: the sign-in page, saying the password changed (the browser's password manager then
    # offers to save the new one at sign-in).
    await page.wait_for_url(re.compile(r"/dashboard/login\?reset=1$"))
    assert "Your password has been changed" in await page.inner_text("[role=status]")
    await shot(page, backend, "reset-3-signed-out")
    await page.get_by_label("Email address").fill(email)
    await page.get_by_label("Password").fill(NEW_PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(re.compile(r"/dashboard$"))

    # The other browser's session ended with the reset.
    await first.goto(server.url + "/dashboard/keys")
    assert "/dashboard/login" in first.url

    # The link does not work twice.
    await page.goto(link)
    assert "This link does not work" in await page.inner_text("h1")
    await signed_in.close()
    await context.close()
