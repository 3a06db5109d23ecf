"""POST /api/v1/contacts/{id}/report (a buyer reports a wrong field of a contact it revealed), and the
operator's routes (`X-Admin-Token`): /api/v1/admin/reports… (the same as `vpx reports`) and
/api/v1/admin/quality (the same as `vpx quality`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request

from vpx.admin.auth import ADMIN_REFUSALS, problem_response, require_admin
from vpx.auth.dependencies import BuyCaller
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import problem_responses
from vpx.quality import figures, reports, trust
from vpx.quality.schemas import (
    AdminReport,
    AdminReportList,
    AdminReportParams,
    ContactReportView,
    QualityFigures,
    ReportDecision,
    ReportRequest,
)

router = APIRouter(prefix="/api/v1/contacts", tags=["contacts"])
admin_router = APIRouter(prefix="/api/v1/admin", tags=["admin"])
Admin = Annotated[str, Depends(require_admin)]
ContactId = Annotated[str, Path(max_length=40, examples=["ct_1042"], description="`ct_<id>`")]
ReportId = Annotated[str, Path(max_length=40, examples=["rpt_17"], description="`rpt_<id>`")]
REFUSED_REPORT: dict[int | str, dict[str, Any]] = problem_response(
    403,
    "IP outside the key's allow-list (`ip_not_allowed`), key type lacks the permission "
    "(`insufficient_permission`), or the account has not revealed the contact (`not_revealed`).",
)


@router.post(
    "/{contact_id}/report",
    response_model=ContactReportView,
    responses={**problem_responses(400, 401, 404, 413, 422, 429), **REFUSED_REPORT},
    summary="Report a wrong field of a contact you revealed",
)
async def report_contact(
    request: Request,
    contact_id: ContactId,
    body: ReportRequest,
    caller: BuyCaller,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
) -> ContactReportView:
    """Tell the service that a phone, email, website or address you paid for is wrong. When another
    paying buyer, unrelated to you, reports the same value, the email's bounce is corroborated, or the
    operator confirms your report, the field is marked bad (no longer sold) and you are refunded its
    share of what the reveal cost (a `refund` ledger entry whose reference is the contact), up to a
    monthly limit. Only an account that revealed the contact may report it, and only a field its
    reveal included; one report per contact and field: sending it again answers the first report as
    it stands."""
    return await reports.submit_report(
        session,
        account_id=caller.account_id,
        contact_id=contact_id,
        field=body.field,
        problem=body.problem,
        note=body.note,
        network_key=trust.network_key(request.app.state.secrets, getattr(request.state, "client_address", None)),
        now=now,
        settings=settings,
    )


@admin_router.get(
    "/reports",
    response_model=AdminReportList,
    responses={**problem_responses(422, 429), **ADMIN_REFUSALS},
    summary="List reports on wrong fields (operators)",
)
async def list_reports(
    params: Annotated[AdminReportParams, Query()], admin: Admin, session: ReadSession
) -> AdminReportList:
    """Oldest first, each with its reporter, the value reported, whether it is still the contact's, the
    refund paid and its trail."""
    return await reports.list_reports(
        session, status=params.status, contact_id=params.contact_id, after=params.after, limit=params.limit
    )


@admin_router.get(
    "/reports/{report_id}",
    response_model=AdminReport,
    responses={**problem_responses(404, 429), **ADMIN_REFUSALS},
    summary="One report (operators)",
)
async def get_report(report_id: ReportId, admin: Admin, session: ReadSession) -> AdminReport:
    return await reports.get_report(session, report_id)


@admin_router.post(
    "/reports/{report_id}/confirm",
    response_model=AdminReport,
    responses={**problem_responses(400, 404, 413, 422, 429), **ADMIN_REFUSALS},
    summary="Confirm a report (operators)",
)
async def confirm_report(
    report_id: ReportId,
    admin: Admin,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
    body: ReportDecision | None = None,
) -> AdminReport:
    """The field is bad: the reporter is refunded its share of the reveal, the field is marked bad (every
    buyer of the contact is told with `contact.corrected`) and every other open report on the same value
    is confirmed and refunded. Confirming a confirmed report changes nothing."""
    return await reports.confirm_report(
        session,
        report_id=report_id,
        actor=f"admin:{admin}",
        note=body.note if body else None,
        now=now,
        settings=settings,
    )


@admin_router.post(
    "/reports/{report_id}/dismiss",
    response_model=AdminReport,
    responses={**problem_responses(400, 404, 409, 413, 422, 429), **ADMIN_REFUSALS},
    summary="Dismiss a report (operators)",
)
async def dismiss_report(
    report_id: ReportId, admin: Admin, session: WriteSession, now: Now, body: ReportDecision | None = None
) -> AdminReport:
    """The field is right: no refund, and the report no longer counts towards another buyer's. A
    confirmed report cannot be dismissed (409); dismissing a dismissed one changes nothing."""
    return await reports.dismiss_report(
        session, report_id=report_id, actor=f"admin:{admin}", note=body.note if body else None, now=now
    )


@admin_router.get(
    "/quality",
    response_model=QualityFigures,
    responses={**problem_responses(429), **ADMIN_REFUSALS},
    summary="Data quality figures (operators)",
)
async def quality(admin: Admin, session: ReadSession, now: Now) -> QualityFigures:
    """The share of the catalogue's emails in each deliverability status, bounce rates by source and by
    import day, reports made, open, confirmed and dismissed, values found bad, and refunds paid each
    month (count and credits)."""
    return await figures.quality_figures(session, now=now)
