"""Without a mail server, links are credentials that must not end up in the log: the dashboard offers no
sign-up and no password reset unless VPX_MAIL_TO_LOG=1 (development and demos), which writes the emails
to the log and says so loudly at start."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.dashboard.conftest import PASSWORD, Browser, browser
from tests.dashboard.test_accessibility import check_page
from tests.dashboard.test_password_reset import path_of
from tests.dashboard.test_reset_mail import captured_logs, log_lines
from vpx.accounts import service as account_service
from vpx.dashboard import logins
from vpx.mail.outbox import outbox_of
from vpx.models import Account, AccountLogin
from vpx.models.dashboard import PasswordReset

MakeApp = Callable[..., Awaitable[FastAPI]]
PUBLIC_URL = "https://vpx.example.test"


async def _account_with_password(app: FastAPI, email: str) -> None:
    """An account that signed up while the server could still send email."""
    now = app.state.clock.now()
    async with app.state.database.write_sessions() as session, session.begin():
        account = await account_service.create_account(
            session, name=email, email=email, plan="free", now=now, settings=app.state.settings
        )
        session.add(
            AccountLogin(
                account_id=account.id,
                password_hash=await logins.hash_password(PASSWORD),
                created_at=now,
                password_changed_at=now,
                email_confirmed_at=now,
            )
        )


async def test_without_a_mail_server_there_is_no_sign_up_and_no_reset_and_no_link_in_the_log(
    make_app: MakeApp, capsys: pytest.CaptureFixture[str]
) -> None:
    app = await make_app(mail_to_log=False, public_url=PUBLIC_URL)
    started = capsys.readouterr().err
    assert "VPX_SMTP_URL is not set" in started and "sign-up and password reset are off" in started
    await _account_with_password(app, "member@example.com")
    async with browser(app) as http:
        web = Browser(http)
        with captured_logs() as records:
            forgot = await web.get("/dashboard/forgot")
            assert forgot.status_code == 200 and "Password reset is not available" in forgot.text
            assert 'action="/dashboard/forgot"' not in forgot.text and "operator" in forgot.text
            asked = await web.submit("/dashboard/login", "/dashboard/forgot", {"email": "member@example.com"})
            assert asked.status_code == 403 and "Password reset is not available" in asked.text

            signup = await web.get("/dashboard/signup")
            assert signup.status_code == 200 and "Sign-up is not available" in signup.text
            assert 'action="/dashboard/signup"' not in signup.text
            for path in ("/dashboard/signup", "/dashboard/forgot"):
                await check_page(web, path)
            data = {"email": "newcomer@example.com", "password": PASSWORD}
            refused = await web.submit("/dashboard/login", "/dashboard/signup", data)
            assert refused.status_code == 403 and "Sign-up is not available" in refused.text
            await outbox_of(app).drain()
        # Signing in still works for accounts that have a password.
        assert (await web.sign_in("member@example.com")).status_code == 303
    lines = log_lines(records)
    assert not [line for line in lines if "token=" in line or "vpx.mail" in line], lines
    async with app.state.database.read_sessions() as session:
        assert (await session.scalars(select(PasswordReset))).all() == []
        emails = (await session.scalars(select(Account.email))).all()
    assert emails == ["member@example.com"]


async def test_with_mail_to_the_log_start_up_warns_and_the_links_are_in_the_log(
    make_app: MakeApp, capsys: pytest.CaptureFixture[str]
) -> None:
    app = await make_app(mail_to_log=True, public_url=PUBLIC_URL)
    started = capsys.readouterr().err
    assert "VPX_MAIL_TO_LOG" in started and "written to the log" in started and '"level": "warning"' in started
    async with browser(app) as http:
        web = Browser(http)
        with captured_logs(logging.WARNING) as records:
            data = {"email": "dev@example.com", "password": PASSWORD, "name": ""}
            assert (await web.submit("/dashboard/signup", "/dashboard/signup", data)).status_code == 200
            await outbox_of(app).drain()
        [letter] = [r.getMessage() for r in records if r.name == "vpx.mail"]
        assert "To: dev@example.com" in letter
        link = next(word for word in letter.split() if "/dashboard/confirm?token=" in word)
        assert (await web.get(path_of(link))).status_code == 200


async def test_a_mail_server_needs_no_warning(make_app: MakeApp, capsys: pytest.CaptureFixture[str]) -> None:
    await make_app(smtp_url="smtp://127.0.0.1:2525", mail_to_log=True)
    started = capsys.readouterr().err
    assert "VPX_MAIL_TO_LOG" not in started and "VPX_SMTP_URL is not set" not in started
