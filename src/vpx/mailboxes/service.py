"""The account's mailboxes (D34): kept with their passwords sealed, their hosts checked like webhook
URLs (no loopback, private or metadata address unless VPX_MAILBOX_ALLOW_PRIVATE; the demo account's
SMTP host may be the demo's mail catcher, vpx.mail.catcher), verified by logging in, paused by hand or
by the bounce rate."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from datetime import UTC, datetime, timedelta

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts import caps
from vpx.config import Settings
from vpx.cursors import decode_keyed_cursor, encode_keyed_cursor
from vpx.demo.account import is_demo_account
from vpx.errors import Conflict, InvalidParameters, NotFound
from vpx.ids import new_id
from vpx.mail.catcher import is_catcher
from vpx.mailboxes.imap import ImapAccount, ImapError
from vpx.mailboxes.imap import verify as imap_verify
from vpx.mailboxes.schemas import MailboxCreate, MailboxUpdate, MailboxView
from vpx.mailboxes.smtp import SmtpAccount, SmtpError
from vpx.mailboxes.smtp import verify as smtp_verify
from vpx.models import Mailbox, Sequence, SequenceMessage
from vpx.outbound.addresses import checked_address
from vpx.outbound.resolver import Resolver
from vpx.secrets import SecretBox
from vpx.sequences import links

log = logging.getLogger("vpx.mailboxes")
IMAP_PORTS = {"tls": 993, "starttls": 143, "none": 143}
# An account's mailboxes, at most (as its webhooks are capped); the list's default page holds them all.
MAX_MAILBOXES_PER_ACCOUNT = 50
MAILBOX_CURSOR = "mbx"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


async def check_host(
    host: str, port: int, *, field: str, settings: Settings, resolver: Resolver, demo: bool = False
) -> None:
    """The host must resolve, and only to addresses a webhook could use (D26's guard). The one exception
    is the demo account's (``demo``) SMTP host when it is the demo's mail catcher (make serve)."""
    if demo and field == "smtp_host" and is_catcher(host, port, settings):
        return
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
        addresses = [str(literal)]
    except ValueError:
        try:
            addresses = await resolver(host, port)
        except (OSError, UnicodeError, ValueError) as exc:  # UnicodeError: a label IDNA cannot encode
            raise InvalidParameters.field(field, f"host {host} does not resolve ({type(exc).__name__})") from None
    if not addresses:
        raise InvalidParameters.field(field, f"host {host} does not resolve")
    for text in addresses:
        _, why = checked_address(host, text, allow_private=settings.mailbox_allow_private)
        if why is not None:
            raise InvalidParameters.field(field, f"refused: {why}")


async def create_mailbox(
    session: AsyncSession,
    *,
    account_id: str,
    body: MailboxCreate,
    box: SecretBox,
    settings: Settings,
    resolver: Resolver,
    now: datetime,
) -> Mailbox:
    demo = await is_demo_account(session, account_id) if settings.demo_mail_port is not None else False
    await check_host(body.smtp_host, body.smtp_port, field="smtp_host", settings=settings, resolver=resolver, demo=demo)
    await caps.count_in_turn(session, account_id)  # two creations at once count one after the other
    count = await session.scalar(select(func.count()).select_from(Mailbox).where(Mailbox.account_id == account_id))
    if (count or 0) >= MAX_MAILBOXES_PER_ACCOUNT:
        raise Conflict(
            f"An account may have at most {MAX_MAILBOXES_PER_ACCOUNT} mailboxes; delete one first "
            "(a paused one still counts)."
        )
    mailbox = Mailbox(
        id=new_id("mbx"),
        account_id=account_id,
        email=body.email.strip().lower(),
        from_name=body.from_name,
        smtp_host=body.smtp_host,
        smtp_port=body.smtp_port,
        smtp_security=body.smtp_security,
        smtp_username=body.smtp_username,
        smtp_password_sealed=_seal(box, body.smtp_password),
        daily_limit=body.daily_limit,
        send_interval_seconds=body.send_interval_seconds,
        postal_address=body.postal_address.strip(),
        status="active",
        created_at=now,
        updated_at=now,
    )
    if body.imap_host is not None:
        await _set_imap(mailbox, body.imap_host, body.imap_port, body.imap_security, settings, resolver)
        mailbox.imap_username, mailbox.imap_password_sealed = body.imap_username, _seal(box, body.imap_password)
    elif any(v is not None for v in (body.imap_port, body.imap_security, body.imap_username, body.imap_password)):
        raise InvalidParameters.field("imap_host", "required with the other imap_ fields")
    session.add(mailbox)
    await session.flush()
    return mailbox


async def _set_imap(
    mailbox: Mailbox, host: str, port: int | None, security: str | None, settings: Settings, resolver: Resolver
) -> None:
    security = security or mailbox.imap_security or "tls"
    port = port or mailbox.imap_port or IMAP_PORTS[security]
    await check_host(host, port, field="imap_host", settings=settings, resolver=resolver)
    mailbox.imap_host, mailbox.imap_port, mailbox.imap_security = host, port, security


def _seal(box: SecretBox, value: str | None) -> str | None:
    return box.seal(value) if value is not None else None


async def get_mailbox(session: AsyncSession, *, account_id: str, mailbox_id: str, lock: bool = False) -> Mailbox:
    mailbox = await session.get(Mailbox, mailbox_id, with_for_update=lock) if len(mailbox_id) <= 32 else None
    if mailbox is None or mailbox.account_id != account_id:
        raise NotFound(f"No mailbox {mailbox_id}.")
    return mailbox


async def update_mailbox(
    session: AsyncSession,
    mailbox: Mailbox,
    body: MailboxUpdate,
    *,
    box: SecretBox,
    settings: Settings,
    resolver: Resolver,
    now: datetime,
) -> Mailbox:
    given = body.model_fields_set
    if {"smtp_host", "smtp_port"} & given:
        host, port = body.smtp_host or mailbox.smtp_host, body.smtp_port or mailbox.smtp_port
        demo = await is_demo_account(session, mailbox.account_id) if settings.demo_mail_port is not None else False
        await check_host(host, port, field="smtp_host", settings=settings, resolver=resolver, demo=demo)
        mailbox.smtp_host, mailbox.smtp_port = host, port
    if "imap_host" in given and body.imap_host is None:
        mailbox.imap_host = mailbox.imap_port = mailbox.imap_security = mailbox.imap_username = None
        mailbox.imap_password_sealed = None
    elif {"imap_host", "imap_port", "imap_security"} & given:
        imap_host = body.imap_host or mailbox.imap_host
        if imap_host is None:
            raise InvalidParameters.field("imap_host", "required with the other imap_ fields")
        await _set_imap(mailbox, imap_host, body.imap_port, body.imap_security, settings, resolver)
    for name in (
        "from_name",
        "smtp_security",
        "smtp_username",
        "imap_username",
        "daily_limit",
        "send_interval_seconds",
        "postal_address",
    ):
        if name in given and (
            getattr(body, name) is not None or name in ("from_name", "smtp_username", "imap_username")
        ):
            setattr(mailbox, name, getattr(body, name))
    if {"daily_limit", "send_interval_seconds"} & given:
        mailbox.next_send_at = None  # a hold computed from the old cap or spacing is looked at again
    if "smtp_password" in given:
        mailbox.smtp_password_sealed = _seal(box, body.smtp_password)
    if "imap_password" in given:
        mailbox.imap_password_sealed = _seal(box, body.imap_password)
    if body.status is not None and body.status != mailbox.status:
        mailbox.status = body.status
        mailbox.pause_reason = "by_user" if body.status == "paused" else None
        if body.status == "active":
            # The sequences the mailbox's pause stopped go on with it.
            await session.execute(
                update(Sequence)
                .where(
                    Sequence.mailbox_id == mailbox.id,
                    Sequence.status == "paused",
                    Sequence.pause_reason.like("mailbox paused%"),
                )
                .values(status="active", pause_reason=None, updated_at=now)
            )
    mailbox.updated_at = now
    await session.flush()
    return mailbox


async def page_mailboxes(
    session: AsyncSession, *, account_id: str, limit: int, cursor: str | None
) -> tuple[list[Mailbox], str | None]:
    """A page of the account's mailboxes, oldest first (ties by id), and the next page's cursor or None."""
    statement = (
        select(Mailbox)
        .where(Mailbox.account_id == account_id)
        .order_by(Mailbox.created_at, Mailbox.id)
        .limit(limit + 1)
    )
    if cursor is not None:
        micros, last_id = decode_keyed_cursor(cursor, MAILBOX_CURSOR)
        at = EPOCH + timedelta(microseconds=micros)
        statement = statement.where(or_(Mailbox.created_at > at, and_(Mailbox.created_at == at, Mailbox.id > last_id)))
    rows = list(await session.scalars(statement))
    if len(rows) <= limit:
        return rows, None
    last = rows[limit - 1]
    return rows[:limit], encode_keyed_cursor(
        MAILBOX_CURSOR, (last.created_at - EPOCH) // timedelta(microseconds=1), last.id
    )


async def delete_mailbox(session: AsyncSession, mailbox: Mailbox, *, now: datetime) -> None:
    """Deletes the mailbox, its sealed passwords and its sequences (their enrollments stop; their
    unsubscribe links are kept 31 days, vpx.sequences.links)."""
    await links.retire(session, Mailbox.id == mailbox.id, now=now)
    await session.delete(mailbox)
    await session.flush()


async def sent_last_day(session: AsyncSession, mailbox_ids: list[str], now: datetime) -> dict[str, int]:
    if not mailbox_ids:
        return {}
    rows = await session.execute(
        select(SequenceMessage.mailbox_id, func.count())
        .where(SequenceMessage.mailbox_id.in_(mailbox_ids), SequenceMessage.sent_at > now - timedelta(hours=24))
        .group_by(SequenceMessage.mailbox_id)
    )
    return {mailbox_id: int(count) for mailbox_id, count in rows}


def view(mailbox: Mailbox, sent: dict[str, int]) -> MailboxView:
    return MailboxView(
        id=mailbox.id,
        email=mailbox.email,
        from_name=mailbox.from_name,
        smtp_host=mailbox.smtp_host,
        smtp_port=mailbox.smtp_port,
        smtp_security=mailbox.smtp_security,
        smtp_username=mailbox.smtp_username,
        smtp_password_set=mailbox.smtp_password_sealed is not None,
        imap_host=mailbox.imap_host,
        imap_port=mailbox.imap_port,
        imap_security=mailbox.imap_security,
        imap_username=mailbox.imap_username,
        imap_password_set=mailbox.imap_password_sealed is not None,
        daily_limit=mailbox.daily_limit,
        send_interval_seconds=mailbox.send_interval_seconds,
        postal_address=mailbox.postal_address,
        status="paused" if mailbox.status == "paused" else "active",
        pause_reason=mailbox.pause_reason,
        sent_last_24h=sent.get(mailbox.id, 0),
        created_at=mailbox.created_at,
        updated_at=mailbox.updated_at,
    )


def smtp_account(mailbox: Mailbox, box: SecretBox, settings: Settings) -> SmtpAccount:
    return SmtpAccount(
        host=mailbox.smtp_host,
        port=mailbox.smtp_port,
        security=mailbox.smtp_security,
        username=mailbox.smtp_username or (mailbox.email if mailbox.smtp_password_sealed else None),
        password=box.open(mailbox.smtp_password_sealed) if mailbox.smtp_password_sealed else None,
        timeout=settings.mailbox_timeout_seconds,
        # The demo's mail catcher on loopback: only the demo account's mailboxes were let point at it.
        allow_private=settings.mailbox_allow_private or is_catcher(mailbox.smtp_host, mailbox.smtp_port, settings),
    )


def imap_account(mailbox: Mailbox, box: SecretBox, settings: Settings) -> ImapAccount | None:
    if not mailbox.imap_host or not mailbox.imap_port:
        return None
    return ImapAccount(
        host=mailbox.imap_host,
        port=mailbox.imap_port,
        security=mailbox.imap_security or "tls",
        username=mailbox.imap_username or mailbox.email,
        password=box.open(mailbox.imap_password_sealed) if mailbox.imap_password_sealed else "",
        timeout=settings.mailbox_timeout_seconds,
        allow_private=settings.mailbox_allow_private,
    )


async def verify(
    mailbox: Mailbox, *, box: SecretBox, settings: Settings, resolver: Resolver | None = None
) -> dict[str, str]:
    """Logs in to SMTP, and to IMAP when set: {"smtp": "ok", "imap": "ok" | "not_configured"}, or a
    422 saying what went wrong in a few fixed words ("authentication failed", "could not connect",
    "TLS failed", "not an SMTP server"…): never the remote server's own, which for a host that is no
    mail server could be anything it says on that port. The server's answer goes to the log."""
    try:
        if resolver is None:
            await smtp_verify(smtp_account(mailbox, box, settings))
        else:
            await smtp_verify(smtp_account(mailbox, box, settings), resolver=resolver)
    except SmtpError as exc:
        log.info("mailbox check failed", extra={"mailbox_id": mailbox.id, "step": "smtp", "reason": exc.reason})
        raise InvalidParameters.field("smtp", exc.said) from None
    account = imap_account(mailbox, box, settings)
    if account is None:
        return {"smtp": "ok", "imap": "not_configured"}
    try:
        await asyncio.to_thread(imap_verify, account)
    except ImapError as exc:
        log.info("mailbox check failed", extra={"mailbox_id": mailbox.id, "step": "imap", "reason": exc.reason})
        raise InvalidParameters.field("imap", exc.said) from None
    return {"smtp": "ok", "imap": "ok"}


async def pause_sequences_of(session: AsyncSession, mailbox_id: str, *, reason: str, now: datetime) -> None:
    await session.execute(
        update(Sequence)
        .where(Sequence.mailbox_id == mailbox_id, Sequence.status == "active")
        .values(status="paused", pause_reason=reason, updated_at=now)
    )
