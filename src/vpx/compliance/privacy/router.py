"""/api/v1/privacy-requests (public, no key, limited per client address) and the operator's
/api/v1/admin/privacy-requests."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse
from limits import parse as parse_rate_limit

from vpx.admin.auth import ADMIN_REFUSALS, client_budget, require_admin
from vpx.auth.ratelimit import RateLimits
from vpx.compliance.privacy import fulfilment, service
from vpx.compliance.privacy.schemas import (
    DenyRequest,
    FulfilRequest,
    PrivacyRequestCreate,
    PrivacyRequestList,
    PrivacyRequestReceived,
    PrivacyRequestView,
    RequestStatus,
    RequestType,
)
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import RateLimited, problem_responses

router = APIRouter(prefix="/api/v1/privacy-requests", tags=["privacy"])
admin_router = APIRouter(prefix="/api/v1/admin/privacy-requests", tags=["admin"])
Admin = Annotated[str, Depends(require_admin)]
RequestId = Annotated[str, Path(max_length=40, examples=["pr_3kTz9aQ1xYb2LmN0"], description="`pr_…`")]


async def _spend_budget(request: Request, limit: str) -> None:
    limits: RateLimits = request.app.state.rate_limits
    verdict = await limits.spend(parse_rate_limit(limit), "privacy", client_budget(request), policy="privacy")
    if not verdict.allowed:
        raise RateLimited("Too many privacy requests from this address; try again later.", headers=verdict.headers)


@router.post(
    "",
    status_code=202,
    response_model=PrivacyRequestReceived,
    responses=problem_responses(400, 413, 422, 429),
    summary="Ask to know, delete, correct or opt out (no key)",
    openapi_extra={"security": []},  # public: no key, so no 401 or 403
)
async def create_privacy_request(
    body: PrivacyRequestCreate, request: Request, session: WriteSession, settings: AppSettings, now: Now
) -> JSONResponse:
    """For the people the catalogue lists: no API key. Give an email, a phone or an NPI to find your
    record, and your name or postal code to verify the request (two details that match your record
    verify a deletion, three the specific details of an access request). An opt-out of sale takes
    effect at once and needs no verification; a request that cannot be verified is applied as an
    opt-out. The answer is due within 45 days (`expected_by`). Limited per client address."""
    await _spend_budget(request, settings.privacy_request_rate_limit)
    received = await service.receive(session, body, now=now)
    answer = PrivacyRequestReceived(
        id=received.id,
        type=body.type,
        status="fulfilled" if received.status == "fulfilled" else "open",
        received_at=received.received_at,
        expected_by=received.expected_by,
    )
    return JSONResponse(answer.model_dump(mode="json"), status_code=202)


@admin_router.get(
    "",
    response_model=PrivacyRequestList,
    responses={**problem_responses(422, 429), **ADMIN_REFUSALS},
    summary="List privacy requests (operators)",
)
async def list_privacy_requests(
    admin: Admin,
    session: ReadSession,
    now: Now,
    status: Annotated[RequestStatus | None, Query(description="Only requests in this state.")] = None,
    type: Annotated[RequestType | None, Query(description="Only requests of this type.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> PrivacyRequestList:
    """Soonest due first, with what verified each and what was decided."""
    found = await service.list_requests(session, status=status, type_=type, limit=limit)
    return PrivacyRequestList(requests=[service.view(r, now=now) for r in found])


@admin_router.get(
    "/{request_id}",
    response_model=PrivacyRequestView,
    responses={**problem_responses(404, 422, 429), **ADMIN_REFUSALS},
    summary="One privacy request (operators)",
)
async def get_privacy_request(
    request_id: RequestId, admin: Admin, session: ReadSession, now: Now
) -> PrivacyRequestView:
    return service.view(await service.get_request(session, request_id), now=now)


@admin_router.post(
    "/{request_id}/fulfil",
    response_model=PrivacyRequestView,
    responses={**problem_responses(400, 404, 409, 413, 422, 429), **ADMIN_REFUSALS},
    summary="Fulfil a privacy request (operators)",
)
async def fulfil_privacy_request(
    request_id: RequestId, body: FulfilRequest, admin: Admin, session: WriteSession, now: Now
) -> PrivacyRequestView:
    """An access request gets its report (what the catalogue holds, how many accounts bought each
    record and when); a deletion erases the records found and keeps them erased; a correction is
    recorded with the note. A request that was not verified cannot be fulfilled (409): deny it."""
    done = await fulfilment.fulfil(session, request_id, actor=f"admin:{admin}", note=body.note, now=now)
    return service.view(done, now=now)


@admin_router.post(
    "/{request_id}/deny",
    response_model=PrivacyRequestView,
    responses={**problem_responses(400, 404, 409, 413, 422, 429), **ADMIN_REFUSALS},
    summary="Deny a privacy request (operators)",
)
async def deny_privacy_request(
    request_id: RequestId, body: DenyRequest, admin: Admin, session: WriteSession, now: Now
) -> PrivacyRequestView:
    done = await fulfilment.deny(
        session, request_id, reason=body.reason, actor=f"admin:{admin}", note=body.note, now=now
    )
    return service.view(done, now=now)
