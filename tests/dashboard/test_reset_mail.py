"""The reset email's way out: VPX_SMTP_URL's forms (STARTTLS, TLS, login), the log instead of SMTP in
development (the link at WARNING), and, with SMTP, no log line holding a reset token, whatever
happens to the email."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from email.utils import format_datetime

import pytest
from fastapi import FastAPI

from tests.conftest import START
from tests.dashboard.conftest import Browser, browser
from tests.dashboard.test_password_reset import LINK, ask_for_reset, link_in, path_of, set_password
from tests.sequences.smtp_server import SmtpSink, Tls
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.dashboard import reset_tokens
from vpx.logs import JsonFormatter
from vpx.mail.outbox import Letter, Outbox
from vpx.mail.server import SmtpServer, SmtpUrlError, parse_sender, parse_smtp_url

PUBLIC_URL = "https://vpx.example.test"
MakeApp = Callable[..., Awaitable[FastAPI]]


@contextmanager
def captured_logs(level: int = logging.DEBUG) -> Iterator[list[logging.LogRecord]]:
    """Every record of the service's loggers (and of the libraries it uses) from this level up."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(level)
    loggers = [logging.getLogger("vpx"), logging.getLogger()]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(level)
    try:
        yield records
    finally:
        for logger, old in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(old)


def log_lines(records: list[logging.LogRecord]) -> list[str]:
    """Each record as the service writes it (a JSON line with every extra field), except those of the
    tests' own parts: the SMTP server (aiosmtpd's "mail.log") and the browser (httpx), which show what
    they receive and the links they follow."""
    formatter = JsonFormatter()
    return [formatter.format(r) for r in records if not r.name.startswith(("mail.log", "httpx", "httpcore"))]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("smtp://mail.example.com", SmtpServer("mail.example.com", 25, "none", None, None)),
        (
            "smtp://user:pass@mail.example.com:587?starttls=1",
            SmtpServer("mail.example.com", 587, "starttls", "user", "pass"),
        ),
        ("smtp://u:p@mail.example.com?starttls=true", SmtpServer("mail.example.com", 587, "starttls", "u", "p")),
        (
            "smtps://me%40example.com:p%40ss%3Aw%2Fd@[2001:db8::25]",
            SmtpServer("2001:db8::25", 465, "tls", "me@example.com", "p@ss:w/d"),
        ),
        ("SMTPS://relay.example.com:2465?verify=0", SmtpServer("relay.example.com", 2465, "tls", None, None, False)),
        ("smtp://user@localhost:2525/", SmtpServer("localhost", 2525, "none", "user", None)),
    ],
)
def test_smtp_urls_name_the_server(url: str, expected: SmtpServer) -> None:
    assert parse_smtp_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "http://user:hunter2secret@mail.example.com",
        "smtp://user:hunter2secret@",
        "smtp://user:hunter2secret@mail.example.com:99999",
        "smtp://user:hunter2secret@mail.example.com/inbox",
        "smtp://user:hunter2secret@mail.example.com?tls=1",
        "smtp://user:hunter2secret@mail.example.com?starttls=maybe",
        "smtps://user:hunter2secret@mail.example.com?starttls=1",
    ],
)
def test_a_bad_smtp_url_stops_the_settings_without_showing_the_password(url: str) -> None:
    with pytest.raises(SmtpUrlError) as refused:
        Settings(smtp_url=url)
    assert "VPX_SMTP_URL" in str(refused.value) and "hunter2secret" not in str(refused.value)


def test_the_sender_is_checked_and_defaults_to_the_public_host() -> None:
    assert str(parse_sender("Acme Data <no-reply@acme.example>")) == "Acme Data <no-reply@acme.example>"
    for bad in ("not an address", "a@b@c.example", "x@-bad-.example", "x@example.com\r\nBcc: y@example.com"):
        with pytest.raises(ValueError, match="VPX_MAIL_FROM"):
            parse_sender(bad)
    assert Settings(smtp_url=None).smtp_url is None and Settings(smtp_url="").smtp_url is None


async def test_without_an_smtp_url_the_email_is_written_to_the_log(make_app: MakeApp) -> None:
    app = await make_app(public_url=PUBLIC_URL + "/")
    async with browser(app) as http:
        web, anonymous = Browser(http), Browser(http)
        await web.sign_up("newcomer@example.com")
        with captured_logs(logging.WARNING) as records:
            await ask_for_reset(app, anonymous, "newcomer@example.com")
            await ask_for_reset(app, anonymous, "stranger@example.com")  # no account: nothing logged
        mail = [r for r in records if r.name == "vpx.mail"]
        assert len(mail) == 1 and mail[0].levelno == logging.WARNING
        text = mail[0].getMessage()
        assert "VPX_SMTP_URL is not set" in text and "To: newcomer@example.com" in text
        found = LINK.search(text)
        assert found, text
        # The logged link is the real thing.
        page = await anonymous.get(path_of(found.group(0)))
        assert page.status_code == 200 and "Choose a new password" in page.text


async def test_with_smtp_no_log_line_holds_a_token(make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    tokens: list[str] = []
    original = reset_tokens.new_token

    def remembered() -> str:
        tokens.append(original())
        return tokens[-1]

    monkeypatch.setattr(reset_tokens, "new_token", remembered)
    with SmtpSink() as sink:
        app = await make_app(smtp_url=f"smtp://127.0.0.1:{sink.port}", public_url=PUBLIC_URL)
        async with browser(app) as http:
            web, anonymous = Browser(http), Browser(http)
            await web.sign_up("careful@example.com")
            with captured_logs() as records:
                # Refused for now, refused for good, then taken and used.
                sink.tempfail_next()
                await ask_for_reset(app, anonymous, "careful@example.com")
                sink.refuse("careful@example.com")
                await ask_for_reset(app, anonymous, "careful@example.com")
                sink.reset()
                await ask_for_reset(app, anonymous, "careful@example.com")
                await ask_for_reset(app, anonymous, "unknown@example.com")
                link = link_in(sink)
                assert (await anonymous.get(path_of(link))).status_code == 200
                assert (await set_password(anonymous, link)).status_code == 303
    lines = log_lines(records)
    assert len(tokens) == 4 and link.endswith(tokens[2])
    assert sum("password reset email not sent" in line for line in lines) == 2, lines
    assert sum("password reset email sent" in line for line in lines) == 1, lines
    assert any('"path": "/dashboard/reset"' in line for line in lines)  # the access log saw the link's path
    for token in tokens:
        assert not [line for line in lines if token in line]


def letter(to: str) -> Letter:
    return Letter(to=to, subject="Reset", text="https://vpx.example.test/dashboard/reset?token=x\n", purpose="test")


@pytest.mark.parametrize("tls", ["starttls", "tls"])
async def test_the_email_goes_over_tls_with_a_login(tls: Tls) -> None:
    with SmtpSink(username="mailer@example.com", password="p@ss:word/1", tls=tls) as sink:
        credentials = "mailer%40example.com:p%40ss%3Aword%2F1"
        scheme = "smtp" if tls == "starttls" else "smtps"
        options = "starttls=1&verify=0" if tls == "starttls" else "verify=0"
        settings = Settings(
            smtp_url=f"{scheme}://{credentials}@127.0.0.1:{sink.port}?{options}",
            mail_from="Acme Data <accounts@acme.example>",
        )
        with captured_logs(logging.INFO) as records:
            await Outbox(settings, clock=FixedClock(START)).deliver(letter("secure@example.com"))
        assert [r.recipients for r in sink.received] == [["secure@example.com"]], log_lines(records)
        assert sink.received[0].sender == "accounts@acme.example"
        message = sink.received[0].message()
        assert message["From"] == "Acme Data <accounts@acme.example>" and message["Date"] == format_datetime(START)


async def test_a_certificate_that_does_not_verify_stops_the_email() -> None:
    with SmtpSink(tls="starttls") as sink:
        settings = Settings(smtp_url=f"smtp://127.0.0.1:{sink.port}?starttls=1")
        with captured_logs(logging.WARNING) as records:
            await Outbox(settings, clock=FixedClock(START)).deliver(letter("checked@example.com"))
        assert sink.received == []
        errors = [r.getMessage() for r in records if r.name == "vpx.mail"]
        assert len(errors) == 1 and "certificate does not verify" in errors[0], errors


async def test_an_smtp_server_that_does_not_answer_is_given_up_on() -> None:
    release = threading.Event()
    with SmtpSink() as sink:
        sink.on_accept = lambda received: bool(release.wait(10))
        try:
            settings = Settings(smtp_url=f"smtp://127.0.0.1:{sink.port}", smtp_timeout_seconds=0.2)
            started = time.monotonic()
            with captured_logs(logging.WARNING) as records:
                await Outbox(settings, clock=FixedClock(START)).deliver(letter("waiting@example.com"))
            assert time.monotonic() - started < 2.0
        finally:
            release.set()
    errors = [r.getMessage() for r in records if r.name == "vpx.mail"]
    assert len(errors) == 1 and "test email not sent" in errors[0], errors


async def test_closing_the_outbox_waits_a_grace_then_gives_up() -> None:
    release = threading.Event()
    with SmtpSink() as sink:
        sink.on_accept = lambda received: bool(release.wait(10))
        try:
            outbox = Outbox(Settings(smtp_url=f"smtp://127.0.0.1:{sink.port}"), clock=FixedClock(START))
            outbox.post(letter("leaving@example.com"))
            started = time.monotonic()
            await outbox.close(grace_seconds=0.2)
            assert time.monotonic() - started < 2.0
            await outbox.drain()  # nothing left under way
        finally:
            release.set()
