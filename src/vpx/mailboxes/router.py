"""/api/v1/mailboxes: the account's own SMTP (and IMAP) mailboxes for sequences (D34). Full Access."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from vpx.auth.dependencies import ManageCaller
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import InvalidParameters, problem_responses
from vpx.fields import JsonInt
from vpx.mailboxes import service
from vpx.mailboxes.schemas import InboundAccepted, MailboxCreate, MailboxList, MailboxUpdate, MailboxView, VerifyResult
from vpx.secrets import SecretBox
from vpx.sequences import replies

router = APIRouter(prefix="/api/v1/mailboxes", tags=["sequences"])
MailboxId = Annotated[str, Path(max_length=40, examples=["mbx_3kTz9aQ1xYb2LmN0"])]
MAX_INBOUND_BYTES = 1_000_000


def _box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.secrets
    return box


@router.post(
    "",
    status_code=201,
    response_model=MailboxView,
    responses=problem_responses(400, 401, 403, 409, 413, 422, 429),
    summary="Add a mailbox",
)
async def create(
    body: MailboxCreate, request: Request, caller: ManageCaller, session: WriteSession, settings: AppSettings, now: Now
) -> MailboxView:
    """The account's own mailbox to send sequences from. Passwords are sealed at rest and never shown
    again. Loopback and private hosts are refused (as webhook URLs are). An account has at most 50
    mailboxes (paused ones count): 409 past that."""
    mailbox = await service.create_mailbox(
        session,
        account_id=caller.account_id,
        body=body,
        box=_box(request),
        settings=settings,
        resolver=request.app.state.webhook_resolver,
        now=now,
    )
    return service.view(mailbox, {})


class MailboxQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: JsonInt = Field(
        default=service.MAX_MAILBOXES_PER_ACCOUNT,
        ge=1,
        le=100,
        description="Page size, 1–100; the default page holds every mailbox an account may have.",
    )
    cursor: str | None = Field(default=None, max_length=200, description="`next_cursor` of the previous page.")


@router.get("", response_model=MailboxList, responses=problem_responses(401, 403, 422, 429), summary="List mailboxes")
async def list_mailboxes(
    params: Annotated[MailboxQuery, Query()], caller: ManageCaller, session: ReadSession, now: Now
) -> MailboxList:
    """The account's mailboxes, oldest first; `next_cursor` gives the next page."""
    rows, next_cursor = await service.page_mailboxes(
        session, account_id=caller.account_id, limit=params.limit, cursor=params.cursor
    )
    sent = await service.sent_last_day(session, [m.id for m in rows], now)
    return MailboxList(mailboxes=[service.view(m, sent) for m in rows], limit=params.limit, next_cursor=next_cursor)


@router.get("/{mailbox_id}", response_model=MailboxView, responses=problem_responses(401, 403, 404, 422, 429))
async def get_mailbox(mailbox_id: MailboxId, caller: ManageCaller, session: ReadSession, now: Now) -> MailboxView:
    mailbox = await service.get_mailbox(session, account_id=caller.account_id, mailbox_id=mailbox_id)
    return service.view(mailbox, await service.sent_last_day(session, [mailbox.id], now))


@router.patch(
    "/{mailbox_id}", response_model=MailboxView, responses=problem_responses(400, 401, 403, 404, 413, 422, 429)
)
async def update_mailbox(
    mailbox_id: MailboxId,
    body: MailboxUpdate,
    request: Request,
    caller: ManageCaller,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
) -> MailboxView:
    """Fields given replace the mailbox's (a password given as null removes it); `status` pauses or
    resumes it (resuming also resumes the sequences it had paused)."""
    mailbox = await service.get_mailbox(session, account_id=caller.account_id, mailbox_id=mailbox_id, lock=True)
    mailbox = await service.update_mailbox(
        session,
        mailbox,
        body,
        box=_box(request),
        settings=settings,
        resolver=request.app.state.webhook_resolver,
        now=now,
    )
    return service.view(mailbox, await service.sent_last_day(session, [mailbox.id], now))


@router.delete("/{mailbox_id}", status_code=204, responses=problem_responses(401, 403, 404, 422, 429))
async def delete_mailbox(mailbox_id: MailboxId, caller: ManageCaller, session: WriteSession, now: Now) -> Response:
    """Deletes the mailbox with its sealed passwords, its sequences and their enrollments; the
    unsubscribe links of the emails already sent keep working for 31 days."""
    mailbox = await service.get_mailbox(session, account_id=caller.account_id, mailbox_id=mailbox_id, lock=True)
    await service.delete_mailbox(session, mailbox, now=now)
    return Response(status_code=204)


@router.post(
    "/{mailbox_id}/verify",
    response_model=VerifyResult,
    responses=problem_responses(401, 403, 404, 422, 429),
    summary="Log in to the mailbox's servers",
)
async def verify(
    mailbox_id: MailboxId, request: Request, caller: ManageCaller, session: ReadSession, settings: AppSettings
) -> VerifyResult:
    """Logs in to SMTP (and IMAP when set): 200, or 422 saying what went wrong in a few fixed words
    (`authentication failed`, `could not connect`, `TLS failed`, `not an SMTP server`…), never the
    server's own."""
    mailbox = await service.get_mailbox(session, account_id=caller.account_id, mailbox_id=mailbox_id)
    result = await service.verify(
        mailbox, box=_box(request), settings=settings, resolver=request.app.state.webhook_resolver
    )
    return VerifyResult.model_validate(result)


@router.post(
    "/{mailbox_id}/inbound",
    status_code=202,
    response_model=InboundAccepted,
    responses=problem_responses(400, 401, 403, 404, 413, 422, 429),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"message/rfc822": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
    summary="Hand in one inbound email (a reply or a bounce)",
)
async def inbound(
    mailbox_id: MailboxId, request: Request, caller: ManageCaller, session: WriteSession, now: Now
) -> JSONResponse:
    """One raw RFC 5322 message, `Content-Type: message/rfc822`, for mail systems that forward instead
    of IMAP. A reply to a message a sequence sent stops its enrollment (`replied`), a delivery status
    notification marks it `bounced`; automatic answers change nothing. The same message twice counts once."""
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type != "message/rfc822":
        raise InvalidParameters.field("Content-Type", "must be message/rfc822: one raw email")
    raw = await request.body()
    if not raw.strip():
        raise InvalidParameters.field("body", "an email is required")
    if len(raw) > MAX_INBOUND_BYTES:
        raise InvalidParameters.field("body", f"at most {MAX_INBOUND_BYTES} bytes")
    mailbox = await service.get_mailbox(session, account_id=caller.account_id, mailbox_id=mailbox_id)
    kind, enrollment_id = await replies.process(session, mailbox, raw, now)
    accepted = InboundAccepted.model_validate({"kind": kind, "enrollment_id": enrollment_id})
    return JSONResponse(accepted.model_dump(mode="json"), status_code=202)
