"""/api/v1/sequences and /api/v1/enrollments: outbound sequencing through the account's own mailbox
(D34). Full Access keys only."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from vpx.auth.dependencies import ManageCaller
from vpx.db import ReadSession, WriteSession
from vpx.deps import Now
from vpx.errors import problem_responses
from vpx.fields import JsonInt
from vpx.sequences import service
from vpx.sequences.schemas import (
    EnrollmentList,
    EnrollRequest,
    EnrollResponse,
    SequenceCreate,
    SequenceList,
    SequenceUpdate,
    SequenceView,
)

router = APIRouter(prefix="/api/v1/sequences", tags=["sequences"])
enrollments_router = APIRouter(prefix="/api/v1/enrollments", tags=["sequences"])
SequenceId = Annotated[str, Path(max_length=40, examples=["seq_3kTz9aQ1xYb2LmN0"])]
EnrollmentId = Annotated[str, Path(max_length=40, examples=["enr_3kTz9aQ1xYb2LmN0"])]
Status = Literal["active", "finished", "replied", "bounced", "unsubscribed", "stopped", "paused"]


@router.post(
    "",
    status_code=201,
    response_model=SequenceView,
    responses=problem_responses(400, 401, 403, 409, 413, 422, 429),
    summary="Create a sequence",
)
async def create(body: SequenceCreate, caller: ManageCaller, session: WriteSession, now: Now) -> SequenceView:
    """Steps (emails with templates, manual tasks, waits between them) sent from one of the account's
    mailboxes, within a send window. A template naming an unknown variable, failing, or going over
    its limits (steps, characters, digits, parts, time) is a 422 here, naming the step and why. An
    account has at most 100 sequences (paused ones count): 409 past that."""
    sequence = await service.create_sequence(session, account_id=caller.account_id, body=body, now=now)
    return await service.sequence_view(session, sequence)


class SequenceQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: JsonInt = Field(
        default=service.MAX_SEQUENCES_PER_ACCOUNT,
        ge=1,
        le=service.MAX_SEQUENCES_PER_ACCOUNT,
        description=f"Page size, 1–{service.MAX_SEQUENCES_PER_ACCOUNT}; the default page holds every sequence an "
        "account may have.",
    )
    cursor: str | None = Field(default=None, max_length=200, description="`next_cursor` of the previous page.")


@router.get("", response_model=SequenceList, responses=problem_responses(401, 403, 422, 429), summary="List sequences")
async def list_sequences(
    params: Annotated[SequenceQuery, Query()], caller: ManageCaller, session: ReadSession
) -> SequenceList:
    """The account's sequences, oldest first; `next_cursor` gives the next page."""
    sequences, next_cursor = await service.page_sequences(
        session, account_id=caller.account_id, limit=params.limit, cursor=params.cursor
    )
    views = await service.sequence_views(session, sequences)
    return SequenceList(sequences=views, limit=params.limit, next_cursor=next_cursor)


@router.get("/{sequence_id}", response_model=SequenceView, responses=problem_responses(401, 403, 404, 422, 429))
async def get_sequence(sequence_id: SequenceId, caller: ManageCaller, session: ReadSession) -> SequenceView:
    sequence = await service.get_sequence(session, account_id=caller.account_id, sequence_id=sequence_id)
    return await service.sequence_view(session, sequence)


@router.patch(
    "/{sequence_id}", response_model=SequenceView, responses=problem_responses(400, 401, 403, 404, 413, 422, 429)
)
async def update_sequence(
    sequence_id: SequenceId, body: SequenceUpdate, caller: ManageCaller, session: WriteSession, now: Now
) -> SequenceView:
    """Replaces the fields given. New steps or a new send window make a new version: new enrollments
    follow it, running ones finish on the version they started."""
    sequence = await service.get_sequence(session, account_id=caller.account_id, sequence_id=sequence_id, lock=True)
    sequence = await service.update_sequence(session, sequence, body, now=now)
    return await service.sequence_view(session, sequence)


@router.delete("/{sequence_id}", status_code=204, responses=problem_responses(401, 403, 404, 422, 429))
async def delete_sequence(sequence_id: SequenceId, caller: ManageCaller, session: WriteSession, now: Now) -> Response:
    """Deletes the sequence with its versions, enrollments and the record of their messages; nothing
    more is sent. The account's unsubscribes stay, and the unsubscribe links of the emails already
    sent keep working for 31 days."""
    sequence = await service.get_sequence(session, account_id=caller.account_id, sequence_id=sequence_id, lock=True)
    await service.delete_sequence(session, sequence, now=now)
    return Response(status_code=204)


@router.post("/{sequence_id}/pause", response_model=SequenceView, responses=problem_responses(401, 403, 404, 422, 429))
async def pause(sequence_id: SequenceId, caller: ManageCaller, session: WriteSession, now: Now) -> SequenceView:
    """Sends nothing more until resumed; enrollments keep their due times."""
    sequence = await service.get_sequence(session, account_id=caller.account_id, sequence_id=sequence_id, lock=True)
    return await service.sequence_view(session, await service.set_status(session, sequence, status="paused", now=now))


@router.post("/{sequence_id}/resume", response_model=SequenceView, responses=problem_responses(401, 403, 404, 422, 429))
async def resume(sequence_id: SequenceId, caller: ManageCaller, session: WriteSession, now: Now) -> SequenceView:
    """Resumes: what fell due while paused goes at once, within the mailbox's caps."""
    sequence = await service.get_sequence(session, account_id=caller.account_id, sequence_id=sequence_id, lock=True)
    return await service.sequence_view(session, await service.set_status(session, sequence, status="active", now=now))


@router.post(
    "/{sequence_id}/enrollments",
    response_model=EnrollResponse,
    responses=problem_responses(400, 401, 403, 404, 413, 422, 429),
    summary="Enroll contacts",
)
async def enroll(
    sequence_id: SequenceId,
    body: EnrollRequest,
    request: Request,
    caller: ManageCaller,
    session: WriteSession,
    now: Now,
) -> EnrollResponse:
    """1–100 contact ids, one result each: `enrolled`, `not_revealed` (only contacts the account
    revealed), `suppressed` (the suppression list or the account's unsubscribes), `no_email`,
    `undeliverable` (the address is known to take no mail: `email_status` `no_mx`, `invalid_syntax` or
    `bounced`), `already_enrolled` or `not_found`; `counts` adds them up. With `decision_maker`, each
    contact's first decision-maker whose email the account's enrichment found is written to instead of
    the business."""
    sequence = await service.get_sequence(session, account_id=caller.account_id, sequence_id=sequence_id)
    results = await service.enroll(
        session,
        sequence,
        contact_ids=body.contact_ids,
        decision_maker=body.decision_maker,
        box=request.app.state.secrets,
        now=now,
    )
    return EnrollResponse(results=results, counts=service.counts(results))


@router.get(
    "/{sequence_id}/enrollments", response_model=EnrollmentList, responses=problem_responses(401, 403, 404, 422, 429)
)
async def enrollments(
    sequence_id: SequenceId,
    caller: ManageCaller,
    session: ReadSession,
    status: Annotated[Status | None, Query()] = None,
    cursor: Annotated[str | None, Query(max_length=40, description="`next_cursor` of the previous page.")] = None,
    limit: Annotated[int, Query(ge=1, le=service.PAGE, description=f"Page size, 1–{service.PAGE}.")] = service.PAGE,
) -> EnrollmentList:
    """The sequence's enrollments, `limit` a page (100 unless asked), each with the messages sent so
    far; `next_cursor` gives the next page."""
    sequence = await service.get_sequence(session, account_id=caller.account_id, sequence_id=sequence_id)
    views, next_cursor = await service.list_enrollments(session, sequence, status=status, cursor=cursor, limit=limit)
    return EnrollmentList(enrollments=views, next_cursor=next_cursor)


@enrollments_router.delete("/{enrollment_id}", status_code=204, responses=problem_responses(401, 403, 404, 422, 429))
async def stop(enrollment_id: EnrollmentId, caller: ManageCaller, session: WriteSession, now: Now) -> Response:
    """Stops one enrollment (`stopped`, `stop_reason: by_user`); stopping an ended one changes nothing."""
    enrollment = await service.get_enrollment(session, account_id=caller.account_id, enrollment_id=enrollment_id)
    await service.stop_enrollment(session, enrollment, reason="by_user", status="stopped", now=now)
    return Response(status_code=204)
