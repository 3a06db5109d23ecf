"""One-click unsubscribe (RFC 8058) at `/u/{token}`: every email's link and `List-Unsubscribe`
header point here. A `GET` shows a page with a button and changes nothing (mail scanners follow
links); a `POST` — the mail client's one click, or the button — suppresses the address for the account
at once: every enrollment of it ends `unsubscribed`, and the account can never enroll it again. When the
operator chooses so (VPX_UNSUBSCRIBE_SUPPRESSES=all), the address also joins the suppression list for
every account, with the reason ``unsubscribed``: past buyers are told and their enrollments stop
(vpx.suppression.notices).

The token is 256 random bits made for one enrollment: only the emails to that recipient carry it,
so a token that is not one vpx made (forged, altered, truncated) is a 404 and changes nothing. It is
kept as its SHA-256, which a link is looked up by (as reset tokens are), and sealed with the
service's keys for the links of the enrollment's later emails: never in clear.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import datetime

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse
from sqlalchemy import select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.compliance import audit
from vpx.db import Database
from vpx.models import AccountUnsubscribe, Enrollment, Mailbox, Sequence, SequenceMessage
from vpx.sequences import events, links
from vpx.sequences.service import token_digest
from vpx.suppression import service as suppression_service

router = APIRouter(tags=["unsubscribe"], include_in_schema=False)
Token = Path(min_length=20, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport"
content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>{title}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}}
button{{font-size:1rem;padding:.6rem 1.2rem}}</style></head><body><h1>{title}</h1>{body}</body></html>"""


@dataclass(frozen=True)
class Recipient:
    """Who a link unsubscribes: an enrollment's, or one kept after its enrollment was deleted."""

    account_id: str
    email: str
    enrollment_id: str | None
    sender: str


async def _recipient(request: Request, token: str) -> Recipient | None:
    database: Database = request.app.state.database
    digest = token_digest(token)
    async with database.read_sessions() as session:
        found = (
            await session.execute(
                select(Enrollment, Mailbox.from_name, Mailbox.email)
                .join(Sequence, Sequence.id == Enrollment.sequence_id)
                .join(Mailbox, Mailbox.id == Sequence.mailbox_id)
                .where(Enrollment.unsubscribe_digest == digest)
            )
        ).first()
        if found is None:
            # The sequence, mailbox or account was deleted since: its links work 31 days more.
            kept = await links.find(session, digest, now=request.app.state.clock.now())
            if kept is None:
                return None
            return Recipient(kept.account_id, kept.email, None, kept.sender)
    enrollment, from_name, from_email = found
    return Recipient(enrollment.account_id, enrollment.email, enrollment.id, from_name or from_email)


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(
        PAGE.format(title=html.escape(title), body=body),
        status_code=status,
        headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
    )


def _not_found() -> HTMLResponse:
    return _page("Link not found", "<p>This unsubscribe link is not one we sent.</p>", 404)


@router.get("/u/{token}", response_class=HTMLResponse)
async def confirm_page(request: Request, token: str = Token) -> HTMLResponse:
    """The confirmation page: a button that POSTs here. Changes nothing by itself."""
    found = await _recipient(request, token)
    if found is None:
        return _not_found()
    body = (
        f"<p>Stop receiving emails from <strong>{html.escape(found.sender)}</strong> at "
        f"<strong>{html.escape(_masked(found.email))}</strong>?</p>"
        f'<form method="post" action="/u/{html.escape(token)}"><button type="submit">Unsubscribe</button></form>'
    )
    return _page("Unsubscribe", body)


@router.post("/u/{token}", response_class=HTMLResponse)
async def unsubscribe(request: Request, token: str = Token) -> HTMLResponse:
    """One click (RFC 8058: a POST with ``List-Unsubscribe=One-Click``) or the page's button: the
    address is suppressed for the account at once."""
    database: Database = request.app.state.database
    found = await _recipient(request, token)
    if found is None:
        return _not_found()
    async with database.write_sessions() as session, session.begin():
        await unsubscribe_address(
            session,
            account_id=found.account_id,
            email=found.email,
            enrollment_id=found.enrollment_id,
            now=request.app.state.clock.now(),
            everywhere=request.app.state.settings.unsubscribe_suppresses == "all",
        )
    return _page("Unsubscribed", f"<p>You will receive no more emails from {html.escape(found.sender)}.</p>")


async def unsubscribe_address(
    session: AsyncSession,
    *,
    account_id: str,
    email: str,
    enrollment_id: str | None,
    now: datetime,
    everywhere: bool = False,
) -> int:
    """Suppresses ``email`` for the account; every running enrollment of it ends ``unsubscribed``.
    ``everywhere``: for every account too (a suppression list entry). Returns how many of the
    account's enrollments it ended. Saying it twice is harmless."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    await session.execute(
        dialect.insert(AccountUnsubscribe)
        .values(account_id=account_id, email=email.lower(), enrollment_id=enrollment_id, created_at=now)
        .on_conflict_do_nothing(index_elements=["account_id", "email"])
    )
    running = list(
        await session.scalars(
            select(Enrollment)
            .where(
                Enrollment.account_id == account_id, Enrollment.email == email.lower(), Enrollment.status == "active"
            )
            .with_for_update()
        )
    )
    for enrollment in running:
        enrollment.status, enrollment.stop_reason, enrollment.next_due_at = "unsubscribed", "unsubscribed", None
        enrollment.updated_at = now
        await session.execute(
            update(SequenceMessage)
            .where(SequenceMessage.enrollment_id == enrollment.id, SequenceMessage.status == "deferred")
            .values(status="stopped", lease_until=None)
        )
        await events.announce(session, enrollment, events.UNSUBSCRIBED, {"email": enrollment.email, "at": now}, now)
    await audit.record(
        session,
        kind="sequence.unsubscribed",
        subject=f"account:{account_id}",
        now=now,
        enrollment=enrollment_id,
        everywhere=everywhere,
        stopped=len(running),
    )
    if everywhere:
        await suppression_service.add_suppression(
            session,
            kind=suppression_service.SuppressionKind.email,
            value=email,
            reason=suppression_service.ReasonClass.unsubscribed,
            note=f"one-click unsubscribe from a sequence email of account {account_id}",
            now=now,
        )
    return len(running)


def _masked(email: str) -> str:
    local, _, domain = email.partition("@")
    return f"{local[:1]}{'•' * max(1, len(local) - 1)}@{domain}"
