"""The service's own email (password resets): sent through the operator's SMTP server after the
answer, in a task of its own, so that a slow or broken server delays no response; or, when
VPX_SMTP_URL is unset (development), written to the log at WARNING instead.

A failure is logged without the message, its recipient or anything listed in ``Letter.secrets``,
and not retried: the person asks again.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime
from email import policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from typing import Any

from starlette.background import BackgroundTask

from vpx.clock import Clock
from vpx.config import Settings
from vpx.mail.server import SmtpServer, default_sender, parse_sender, parse_smtp_url
from vpx.mailboxes import smtp
from vpx.outbound.resolver import Resolver, system_resolver

log = logging.getLogger("vpx.mail")
# A whole email may take this many times the per-step time limit (connect, EHLO, TLS, AUTH, MAIL, RCPT, DATA).
STEPS = 3
# RFC 5322's limit for a line, CRLF excluded.
MAX_LINE = 998


@dataclass(frozen=True)
class Letter:
    to: str
    subject: str
    text: str
    # What the email is, for the logs ("password reset"), and the account it concerns.
    purpose: str
    account_id: str | None = None
    # Values that must never reach a log line when the email goes by SMTP (a reset token).
    secrets: tuple[str, ...] = field(default=(), repr=False)


def compose(letter: Letter, *, sender: Address, now: datetime) -> EmailMessage:
    """The message as it goes over SMTP: plain UTF-8 text; ValueError for an address it cannot carry."""
    message = EmailMessage(policy=policy.SMTP)
    message["Message-ID"] = make_msgid(domain=sender.domain)
    message["Date"] = format_datetime(now)
    message["From"] = sender
    message["To"] = Address(addr_spec=letter.to)
    message["Subject"] = letter.subject
    # ASCII goes as it is, so the link stays whole in the raw message; anything else quoted-printable.
    plain = letter.text.isascii() and all(len(line) <= MAX_LINE for line in letter.text.splitlines())
    message.set_content(letter.text, charset="utf-8", cte="7bit" if plain else "quoted-printable")
    return message


class Outbox:
    """Sends letters in tasks of their own; ``drain`` waits for those under way (tests, shutdown)."""

    def __init__(self, settings: Settings, *, clock: Clock, resolver: Resolver = system_resolver) -> None:
        url = settings.smtp_url.get_secret_value() if settings.smtp_url is not None else None
        self.server: SmtpServer | None = parse_smtp_url(url) if url else None
        self.sender = parse_sender(settings.mail_from) if settings.mail_from else default_sender(settings.public_url)
        self.timeout = settings.smtp_timeout_seconds
        self.clock = clock
        self.resolver = resolver
        self._pending: set[asyncio.Task[None]] = set()

    def after_response(self, letter: Letter) -> BackgroundTask:
        """Posts the letter once the answer has gone (and the request's transaction has committed)."""

        async def post() -> None:
            self.post(letter)

        return BackgroundTask(post)

    def post(self, letter: Letter) -> None:
        task = asyncio.get_running_loop().create_task(self.deliver(letter), name=f"mail: {letter.purpose}")
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def drain(self) -> None:
        while self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    async def close(self, *, grace_seconds: float) -> None:
        """Waits up to ``grace_seconds`` for the letters under way, then gives up on the rest."""
        if not self._pending:
            return
        _, late = await asyncio.wait(set(self._pending), timeout=grace_seconds)
        for task in late:
            task.cancel()
        if late:
            await asyncio.gather(*late, return_exceptions=True)

    async def deliver(self, letter: Letter) -> None:
        """Sends (or, without an SMTP server, logs) one letter; never raises."""
        facts = {"purpose": letter.purpose, "account_id": letter.account_id}
        if self.server is None:
            log.warning(
                "VPX_SMTP_URL is not set: this %s email was not sent, here it is instead "
                "(set VPX_SMTP_URL to send email).\nTo: %s\nSubject: %s\n\n%s",
                letter.purpose, letter.to, letter.subject, letter.text, extra=facts,
            )  # fmt: skip
            return
        try:
            reason = await self._send(self.server, letter)
        except Exception as exc:  # whatever went wrong, the cause is logged and the caller never sees it
            reason = f"{type(exc).__name__}: {exc}"
        if reason is None:
            log.info("%s email sent", letter.purpose, extra=facts)
            return
        for secret in letter.secrets:
            reason = reason.replace(secret, "***")
        log.error("%s email not sent: %s", letter.purpose, reason, extra=facts)

    async def _send(self, server: SmtpServer, letter: Letter) -> str | None:
        """None once the server has taken the letter; otherwise why not."""
        account = smtp.SmtpAccount(
            host=server.host,
            port=server.port,
            security=server.security,
            username=server.username,
            password=server.password,
            timeout=self.timeout,
            verify_tls=server.verify_tls,
            # The operator's own server: a relay on this machine or the private network is the usual case.
            allow_private=True,
        )
        message = compose(letter, sender=self.sender, now=self.clock.now())
        try:
            async with asyncio.timeout(self.timeout * STEPS):
                outcome = await smtp.send(
                    account, message, sender=self.sender.addr_spec, recipient=letter.to, resolver=self.resolver
                )
        except TimeoutError:
            return f"no answer from {server.host}:{server.port} within {self.timeout * STEPS:g} s"
        except smtp.SmtpError as exc:
            return exc.reason
        if outcome.status == "accepted":
            return None
        return f"{outcome.status}: {outcome.code or ''} {outcome.reply}".strip()


def outbox_of(app: Any) -> Outbox:
    """The app's outbox (``app.state.mail``), made on first use when the app was built without one."""
    outbox: Outbox | None = getattr(app.state, "mail", None)
    if outbox is None:
        outbox = Outbox(app.state.settings, clock=app.state.clock)
        app.state.mail = outbox
    return outbox
