"""Sign-up confirmed by email, against a real SMTP server (aiosmtpd on loopback): a new address gets a
single-use, 24-hour link and no credits until it is used (with the account's password); an address that
already has an account gets the same answer, and its owner a notice. Confirming grants the free credits
once, even when the link is used twice at the same time."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.conftest import START
from tests.dashboard.conftest import PASSWORD, TOKEN, Browser, browser
from tests.dashboard.test_accessibility import check_page
from tests.dashboard.test_password_reset import path_of
from tests.sequences.smtp_server import SmtpSink
from vpx.clock import FixedClock
from vpx.mail.outbox import outbox_of
from vpx.models import Account, AccountLogin, LedgerEntry

PUBLIC_URL = "https://vpx.example.test"
CONFIRM_LINK = re.compile(r"https://vpx\.example\.test/dashboard/confirm\?token=[A-Za-z0-9_-]+")
RESET_LINK = re.compile(r"https://vpx\.example\.test/dashboard/reset\?token=[A-Za-z0-9_-]+")
SENT = "Check your email"
CONFIRM_SUBJECT = "Confirm your email address for vpx"
NOTICE_SUBJECT = "Someone tried to sign up for vpx with your address"
REFUSED = "This link does not work"


@pytest.fixture
def sink() -> Iterator[SmtpSink]:
    with SmtpSink() as running:
        yield running


@pytest.fixture
async def mail_app(make_app: Callable[..., Awaitable[FastAPI]], sink: SmtpSink) -> FastAPI:
    return await make_app(
        smtp_url=f"smtp://127.0.0.1:{sink.port}",
        public_url=PUBLIC_URL,
        login_rate_limit="1000/minute",
        signup_rate_limit="1000/minute",
        password_reset_rate_limit="1000/hour",
    )


@pytest.fixture
async def web(mail_app: FastAPI) -> AsyncIterator[Browser]:
    async with browser(mail_app) as http:
        yield Browser(http)


@pytest.fixture
async def other_web(mail_app: FastAPI) -> AsyncIterator[Browser]:
    async with browser(mail_app) as http:
        yield Browser(http)


async def ask_to_sign_up(app: FastAPI, who: Browser, email: str, password: str = PASSWORD) -> Any:
    """Submits the sign-up form, then waits for the email to be handed over."""
    data = {"email": email, "password": password, "name": ""}
    response = await who.submit("/dashboard/signup", "/dashboard/signup", data)
    await outbox_of(app).drain()
    return response


def mails(sink: SmtpSink, to: str, subject: str) -> list[str]:
    """The bodies of the emails ``to`` received with this subject, oldest first."""
    found = []
    for received in sink.received:
        message = received.message()
        if received.recipients == [to] and message["Subject"] == subject:
            found.append(str(message.get_content()))
    return found


def confirmation_link(sink: SmtpSink, to: str) -> str:
    bodies = mails(sink, to, CONFIRM_SUBJECT)
    assert bodies, f"no confirmation email to {to}"
    found = CONFIRM_LINK.search(bodies[-1])
    assert found, bodies[-1]
    return found.group(0)


async def confirm(who: Browser, link: str, password: str = PASSWORD) -> Any:
    """Opens the link and sends its form with the password."""
    page = await who.get(path_of(link))
    found = TOKEN.search(page.text)
    if page.status_code != 200 or not found:
        return page
    token = link.rsplit("=", 1)[1]
    return await who.http.post(
        "/dashboard/confirm", data={"csrf_token": found.group(1), "token": token, "password": password}
    )


async def ledger(app: FastAPI, email: str) -> list[tuple[str, Any]]:
    async with app.state.database.read_sessions() as session:
        account_id = await session.scalar(select(Account.id).where(Account.email == email))
        entries = await session.scalars(select(LedgerEntry).where(LedgerEntry.account_id == account_id))
        return [(e.kind, e.amount) for e in entries]


async def test_a_new_address_gets_a_link_and_no_credits_until_it_confirms(
    mail_app: FastAPI, sink: SmtpSink, web: Browser, other_web: Browser
) -> None:
    response = await ask_to_sign_up(mail_app, web, " New.Buyer@Example.com ")
    assert response.status_code == 200 and SENT in response.text and "new.buyer@example.com" in response.text
    assert "vpx_session" not in response.cookies

    # The account exists, unconfirmed, without credits; the email holds the link, the table its SHA-256.
    assert await ledger(mail_app, "new.buyer@example.com") == []
    link = confirmation_link(sink, "new.buyer@example.com")
    token = link.rsplit("=", 1)[1]
    assert len(token) == 43  # 32 random bytes
    async with mail_app.state.database.read_sessions() as session:
        login = await session.scalar(select(AccountLogin))
    assert login is not None and login.email_confirmed_at is None
    assert login.confirmation_hash == hashlib.sha256(token.encode()).hexdigest()
    assert login.confirmation_expires_at == START + timedelta(hours=24)

    # Until then the account cannot sign in; the right password sends a new link (the old one is void).
    refused = await other_web.sign_in("new.buyer@example.com")
    assert refused.status_code == 403 and "Confirm your email address first" in refused.text
    assert "vpx_session" not in refused.cookies
    await outbox_of(mail_app).drain()
    assert len(mails(sink, "new.buyer@example.com", CONFIRM_SUBJECT)) == 2
    assert (await web.get(path_of(link))).status_code == 410
    link = confirmation_link(sink, "new.buyer@example.com")
    wrong = await other_web.sign_in("new.buyer@example.com", "not the password")
    assert wrong.status_code == 401
    await outbox_of(mail_app).drain()
    assert len(mails(sink, "new.buyer@example.com", CONFIRM_SUBJECT)) == 2

    # Opening the link shows a form and spends nothing; the password is asked for.
    page = await web.get(path_of(link))
    assert page.status_code == 200 and "new.buyer@example.com" in page.text
    assert page.headers["referrer-policy"] == "no-referrer"
    await check_page(web, path_of(link))
    mistyped = await confirm(web, link, "not the password")
    assert mistyped.status_code == 401 and "not right" in mistyped.text
    assert await ledger(mail_app, "new.buyer@example.com") == []

    done = await confirm(web, link)
    assert done.status_code == 303 and done.headers["location"] == "/dashboard?welcome=1"
    assert "vpx_session" in done.cookies
    overview = await web.get("/dashboard?welcome=1")
    assert 'data-testid="balance">25<' in overview.text and "Welcome to vpx" in overview.text
    assert await ledger(mail_app, "new.buyer@example.com") == [("free_monthly", 25)]

    # Once only; afterwards the account signs in as any other.
    assert (await confirm(other_web, link)).status_code == 410
    assert (await other_web.sign_in("new.buyer@example.com")).status_code == 303
    assert await ledger(mail_app, "new.buyer@example.com") == [("free_monthly", 25)]


def _without_tokens(page: str) -> str:
    return TOKEN.sub("", page)


async def test_a_taken_address_gets_the_same_answer_and_its_owner_a_notice(
    mail_app: FastAPI, sink: SmtpSink, web: Browser, other_web: Browser
) -> None:
    await web.sign_up("owner@example.com")
    sink.reset()

    fresh = await ask_to_sign_up(mail_app, other_web, "fresh@example.com", "someone else's password")
    taken = await ask_to_sign_up(mail_app, other_web, "OWNER@example.com", "someone else's password")
    assert fresh.status_code == taken.status_code == 200
    assert _without_tokens(fresh.text).replace("fresh@example.com", "EMAIL") == _without_tokens(taken.text).replace(
        "owner@example.com", "EMAIL"
    )
    assert dict(fresh.headers).keys() == dict(taken.headers).keys()
    assert "vpx_session" not in taken.cookies

    # The owner hears of it, with no link that changes anything; nothing about the account changed.
    assert mails(sink, "owner@example.com", CONFIRM_SUBJECT) == []
    [notice] = mails(sink, "owner@example.com", NOTICE_SUBJECT)
    assert f"{PUBLIC_URL}/dashboard/login" in notice and f"{PUBLIC_URL}/dashboard/forgot" in notice
    assert "token" not in notice
    assert len(mails(sink, "fresh@example.com", CONFIRM_SUBJECT)) == 1
    assert (await other_web.sign_in("owner@example.com", "someone else's password")).status_code == 401
    assert (await other_web.sign_in("owner@example.com")).status_code == 303
    assert await ledger(mail_app, "owner@example.com") == [("free_monthly", 25)]
    async with mail_app.state.database.read_sessions() as session:
        assert len((await session.scalars(select(Account))).all()) == 2


async def test_a_second_sign_up_for_an_unconfirmed_address_changes_nothing(
    mail_app: FastAPI, sink: SmtpSink, web: Browser, other_web: Browser
) -> None:
    """Someone else's sign-up for your address neither takes the account nor sets its password."""
    await ask_to_sign_up(mail_app, web, "early@example.com")
    link = confirmation_link(sink, "early@example.com")
    again = await ask_to_sign_up(mail_app, other_web, "early@example.com", "an intruder's password")
    assert again.status_code == 200 and SENT in again.text
    assert len(mails(sink, "early@example.com", NOTICE_SUBJECT)) == 1
    assert (await confirm(web, link, "an intruder's password")).status_code == 401
    assert (await confirm(web, link)).status_code == 303


async def test_the_link_expires_after_24_hours(
    mail_app: FastAPI, sink: SmtpSink, web: Browser, other_web: Browser, clock: FixedClock
) -> None:
    await ask_to_sign_up(mail_app, web, "late@example.com")
    link = confirmation_link(sink, "late@example.com")
    clock.set(START + timedelta(hours=23, minutes=59))
    assert (await web.get(path_of(link))).status_code == 200
    clock.set(START + timedelta(hours=24))
    expired = await confirm(web, link)
    assert expired.status_code == 410 and REFUSED in expired.text and 'href="/dashboard/login"' in expired.text
    # Signing in with the password sends a fresh link.
    assert (await other_web.sign_in("late@example.com")).status_code == 403
    await outbox_of(mail_app).drain()
    assert (await confirm(web, confirmation_link(sink, "late@example.com"))).status_code == 303


async def test_a_password_reset_confirms_the_address(
    mail_app: FastAPI, sink: SmtpSink, web: Browser, other_web: Browser
) -> None:
    """A reset link proves the address as well as a confirmation link does (and takes the account
    back from whoever signed up with it)."""
    await ask_to_sign_up(mail_app, web, "taken-back@example.com", "an intruder's password")
    confirmation = confirmation_link(sink, "taken-back@example.com")
    await other_web.submit("/dashboard/forgot", "/dashboard/forgot", {"email": "taken-back@example.com"})
    await outbox_of(mail_app).drain()
    bodies = mails(sink, "taken-back@example.com", "Reset your vpx dashboard password")
    reset_link = RESET_LINK.search(bodies[-1])
    assert reset_link
    token = reset_link.group(0).rsplit("=", 1)[1]
    done = await other_web.submit(
        path_of(reset_link.group(0)), "/dashboard/reset", {"token": token, "password": PASSWORD}
    )
    assert done.status_code == 303
    assert (await other_web.sign_in("taken-back@example.com")).status_code == 303
    assert await ledger(mail_app, "taken-back@example.com") == [("free_monthly", 25)]
    assert (await web.get(path_of(confirmation))).status_code == 410


async def test_confirming_twice_at_once_grants_the_credits_once(
    mail_app: FastAPI, sink: SmtpSink, web: Browser, other_web: Browser, backend: str
) -> None:
    await ask_to_sign_up(mail_app, web, "eager@example.com")
    link = confirmation_link(sink, "eager@example.com")
    token = link.rsplit("=", 1)[1]
    forms = []
    for who in (web, other_web):
        found = TOKEN.search((await who.get(path_of(link))).text)
        assert found
        forms.append((who, {"csrf_token": found.group(1), "token": token, "password": PASSWORD}))
    answers = await asyncio.gather(*(who.http.post("/dashboard/confirm", data=data) for who, data in forms))
    assert sorted(a.status_code for a in answers) == [303, 410], backend
    assert await ledger(mail_app, "eager@example.com") == [("free_monthly", 25)]


@pytest.mark.postgres_only
async def test_two_transactions_spend_one_link_once(
    mail_app: FastAPI, sink: SmtpSink, web: Browser, backend: str
) -> None:
    """On PostgreSQL, the second of two open transactions waits for the first and then finds the link
    spent: the credits are granted once."""
    from vpx.dashboard import confirmations

    if backend != "postgresql":
        pytest.skip("concurrent transactions are PostgreSQL's (SQLite has one writer at a time)")
    await ask_to_sign_up(mail_app, web, "racing@example.com")
    token = confirmation_link(sink, "racing@example.com").rsplit("=", 1)[1]
    database, settings = mail_app.state.database, mail_app.state.settings
    async with database.write_sessions() as first, database.write_sessions() as second:
        won = await confirmations.confirm(first, token=token, now=START, settings=settings)
        racing = asyncio.create_task(confirmations.confirm(second, token=token, now=START, settings=settings))
        await asyncio.sleep(0.2)
        assert not racing.done()  # held by the first transaction's row lock
        await first.commit()
        lost = await racing
        await second.commit()
    assert won is not None and lost is None
    assert await ledger(mail_app, "racing@example.com") == [("free_monthly", 25)]


async def test_sign_ups_are_limited_per_email_too(make_app: Callable[..., Awaitable[FastAPI]], sink: SmtpSink) -> None:
    app = await make_app(smtp_url=f"smtp://127.0.0.1:{sink.port}", signup_rate_limit="2/hour")
    async with browser(app, "198.51.100.1") as one, browser(app, "198.51.100.2") as two:
        first, second = Browser(one), Browser(two)
        assert (await ask_to_sign_up(app, first, "flood@example.com")).status_code == 200
        assert (await ask_to_sign_up(app, second, "flood@example.com")).status_code == 200
        assert (await ask_to_sign_up(app, second, "flood@example.com")).status_code == 429
    assert len(sink.received) == 2
