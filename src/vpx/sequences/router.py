"""/api/v1/sequences and /api/v1/enrollments: outbound sequencing through the account's own mailbox
(D34). Full Access keys only."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Response

from vpx.auth.dependencies import ManageCaller
from vpx.db import ReadSession, WriteSession
from vpx.deps import Now
from vpx.errors import problem_responses
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
    responses=problem_responses(400, 401, 403, 413, 422, 429),
    summary="Create a sequence",
)
async def create(body: SequenceCreate, caller: ManageCaller, session: WriteSession, now: Now) -> SequenceView:
    """Steps (emails with templates, manual tasks, waits between them) sent from one of the account's
    mailboxes, within a send window. A template naming an unknown variable is a 422 here."""
    sequence = await service.create_sequence(session, account_id=caller.account_id, body=body, now=now)
    return await service.sequence_view(session, sequence)


@router.get("", response_model=SequenceList, responses=problem_responses(401, 403, 429), summary="List sequences")
async def list_sequences(caller: ManageCaller, session: ReadSession) -> SequenceList:
    return SequenceList(
        sequences=[
            await service.sequence_view(session, s) for s in await service.sequences_of(session, caller.account_id)
        ]
    )


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
    sequence_id: SequenceId, body: EnrollRequest, caller: ManageCaller, session: WriteSession, now: Now
) -> EnrollResponse:
    """1–100 contact ids, one result each: `enrolled`, `not_revealed` (only contacts the account
    revealed), `suppressed` (the suppression list or the account's unsubscribes), `no_email`,
    `already_enrolled` or `not_found`. With `decision_maker`, each contact's first decision-maker
    whose email the account's enrichment found is written to instead of the business."""
    sequence = await service.get_sequence(session, account_id=caller.account_id, sequence_id=sequence_id)
    results = await service.enroll(
        session, sequence, contact_ids=body.contact_ids, decision_maker=body.decision_maker, now=now
    )
    return EnrollResponse(results=results)


@router.get(
    "/{sequence_id}/enrollments", response_model=EnrollmentList, responses=problem_responses(401, 403, 404, 422, 429)
)
async def enrollments(
    sequence_id: SequenceId,
    caller: ManageCaller,
    session: ReadSession,
    status: Annotated[Status | None, Query()] = None,
    cursor: Annotated[str | None, Query(max_length=40)] = None,
) -> EnrollmentList:
    """The sequence's enrollments, 100 a page, each with the messages sent so far."""
    sequence = await service.get_sequence(session, account_id=caller.account_id, sequence_id=sequence_id)
    views, next_cursor = await service.list_enrollments(session, sequence, status=status, cursor=cursor)
    return EnrollmentList(enrollments=views, next_cursor=next_cursor)


@enrollments_router.delete("/{enrollment_id}", status_code=204, responses=problem_responses(401, 403, 404, 422, 429))
async def stop(enrollment_id: EnrollmentId, caller: ManageCaller, session: WriteSession, now: Now) -> Response:
    """Stops one enrollment (`stopped`, `stop_reason: by_user`); stopping an ended one changes nothing."""
    enrollment = await service.get_enrollment(session, account_id=caller.account_id, enrollment_id=enrollment_id)
    await service.stop_enrollment(session, enrollment, reason="by_user", status="stopped", now=now)
    return Response(status_code=204)
