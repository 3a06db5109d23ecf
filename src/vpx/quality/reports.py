"""Buyers' reports on wrong fields and the operator's decisions on them.

A report comes from an account that revealed the contact, one per account, contact and field: a
repeat answers the first report as it stands, writing nothing. It is reviewed at once, in its own
transaction, by the rules of vpx.quality.rules (a second buyer's report or a bounce of the same value
makes the field bad and refunds every reporter). The operator may confirm a report (the field is
bad: the same refunds) or dismiss it; every step is kept in the report's trail (who, when, why).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Table, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.config import Settings
from vpx.contacts import pricing
from vpx.errors import Conflict, InvalidParameters, NotFound, NotRevealed
from vpx.ids import parse_number_id, public_number_id
from vpx.models import Contact, Reveal
from vpx.models.quality import ContactReport, DataRefund, ReportAction
from vpx.quality import rules
from vpx.quality.fields import COLUMNS, field_values, value_key
from vpx.quality.schemas import (
    AdminReport,
    AdminReportList,
    ContactReportView,
    ReportActionView,
    ReportStatus,
)

_contacts: Table = Contact.__table__  # type: ignore[assignment]


async def submit_report(
    session: AsyncSession,
    *,
    account_id: str,
    contact_id: str,
    field: str,
    problem: str,
    note: str | None,
    network_key: str | None = None,
    now: datetime,
    settings: Settings,
) -> ContactReportView:
    """Records the account's report (or finds its earlier one) and applies the rules. ``network_key``:
    the network the report came from (vpx.quality.trust.network_key)."""
    number = parse_number_id("ct", contact_id)
    contact = await rules.lock_contact(session, number) if number is not None else None
    if contact is None:
        raise NotFound(f"No contact {contact_id}.")
    public_id = public_number_id("ct", contact.id)
    revealed = (
        await session.execute(
            select(Reveal.id, Reveal.fields_sold).where(
                Reveal.account_id == account_id, Reveal.contact_id == contact.id
            )
        )
    ).one_or_none()
    if revealed is None:
        raise NotRevealed(f"Only an account that revealed {public_id} may report it; reveal it first.")
    earlier = await session.scalar(
        select(ContactReport).where(
            ContactReport.account_id == account_id,
            ContactReport.contact_id == contact.id,
            ContactReport.field == field,
        )
    )
    if earlier is not None:
        return await account_view(session, earlier)
    value = field_values(contact)[field]
    if value is None:
        raise InvalidParameters.field("field", f"{public_id} has no {field} to report")
    if revealed.fields_sold is not None and not revealed.fields_sold & pricing.FIELD_BITS[field]:
        raise InvalidParameters.field("field", f"your reveal of {public_id} did not include its {field}")
    report = ContactReport(
        account_id=account_id,
        contact_id=contact.id,
        field=field,
        problem=problem,
        note=note or "",
        value=value[:500],
        value_key=value_key(value),
        status="open",
        network_key=network_key,
        created_at=now,
    )
    session.add(report)
    await session.flush()
    session.add(ReportAction(report_id=report.id, action="opened", actor=f"account:{account_id}", note="", at=now))
    await rules.review_reports(session, contact, field, report.value_key, now=now, settings=settings)
    return await account_view(session, report)


async def _refunded(session: AsyncSession, report: ContactReport) -> dict[str, Any]:
    found = (
        await session.execute(
            select(DataRefund.credits, DataRefund.withheld, DataRefund.withheld_reason).where(
                DataRefund.account_id == report.account_id,
                DataRefund.contact_id == report.contact_id,
                DataRefund.field == report.field,
            )
        )
    ).one_or_none()
    return _refund_fields(found)


def _refund_fields(found: Any) -> dict[str, Any]:
    if found is None:
        return {"credits_refunded": Decimal(0), "refund_withheld": Decimal(0), "refund_withheld_reason": None}
    return {
        "credits_refunded": found.credits,
        "refund_withheld": found.withheld,
        "refund_withheld_reason": found.withheld_reason,
    }


async def account_view(session: AsyncSession, report: ContactReport) -> ContactReportView:
    await session.flush()
    return ContactReportView(**_common(report), **await _refunded(session, report))


def _common(report: ContactReport) -> dict[str, Any]:
    return {
        "id": public_number_id("rpt", report.id),
        "contact_id": public_number_id("ct", report.contact_id),
        "field": report.field,
        "problem": report.problem,
        "note": report.note or None,
        "status": report.status,
        "created_at": report.created_at,
        "resolved_at": report.resolved_at,
    }


async def admin_views(session: AsyncSession, reports: list[ContactReport]) -> list[AdminReport]:
    if not reports:
        return []
    ids = [r.id for r in reports]
    contact_ids = sorted({r.contact_id for r in reports})
    history: dict[int, list[ReportActionView]] = {}
    for action in await session.scalars(
        select(ReportAction).where(ReportAction.report_id.in_(ids)).order_by(ReportAction.id)
    ):
        history.setdefault(action.report_id, []).append(
            ReportActionView.model_validate(
                {"action": action.action, "actor": action.actor, "note": action.note or None, "at": action.at}
            )
        )
    contacts = {
        row.id: row
        for row in await session.execute(
            select(Contact.id, Contact.business_name, *(_contacts.c[name] for name in COLUMNS)).where(
                Contact.id.in_(contact_ids)
            )
        )
    }
    refunds = {
        (row.account_id, row.contact_id, row.field): row
        for row in await session.execute(
            select(
                DataRefund.account_id,
                DataRefund.contact_id,
                DataRefund.field,
                DataRefund.credits,
                DataRefund.withheld,
                DataRefund.withheld_reason,
            ).where(DataRefund.contact_id.in_(contact_ids))
        )
    }
    views = []
    for report in reports:
        contact = contacts[report.contact_id]
        views.append(
            AdminReport(
                **_common(report),
                **_refund_fields(refunds.get((report.account_id, report.contact_id, report.field))),
                account_id=report.account_id,
                business_name=contact.business_name,
                value=report.value,
                current=rules.current_key(contact, report.field) == report.value_key,
                history=history.get(report.id, []),
            )
        )
    return views


def _report_number(report_id: str) -> int:
    number = parse_number_id("rpt", report_id)
    if number is None:
        raise NotFound(f"No report {report_id}.")
    return number


async def list_reports(
    session: AsyncSession, *, status: ReportStatus | None, contact_id: str | None, after: str | None, limit: int
) -> AdminReportList:
    """Oldest first (a queue to work through); ``after`` continues a page."""
    query = select(ContactReport).order_by(ContactReport.id).limit(limit + 1)
    if status is not None:
        query = query.where(ContactReport.status == status)
    if contact_id is not None:
        number = parse_number_id("ct", contact_id)
        if number is None:
            raise InvalidParameters.field("contact_id", "must be a contact id (ct_…)")
        query = query.where(ContactReport.contact_id == number)
    if after is not None:
        start = parse_number_id("rpt", after)
        if start is None:
            raise InvalidParameters.field("after", "must be a report id (rpt_…)")
        query = query.where(ContactReport.id > start)
    found = list(await session.scalars(query))
    more = len(found) > limit
    found = found[:limit]
    next_after = public_number_id("rpt", found[-1].id) if more and found else None
    return AdminReportList(reports=await admin_views(session, found), next_after=next_after)


async def get_report(session: AsyncSession, report_id: str) -> AdminReport:
    report = await session.get(ContactReport, _report_number(report_id))
    if report is None:
        raise NotFound(f"No report {report_id}.")
    [view] = await admin_views(session, [report])
    return view


async def _locked_report(session: AsyncSession, report_id: str) -> tuple[ContactReport, Any]:
    """The report and its contact, the contact locked first and the report read after (fresh)."""
    number = _report_number(report_id)
    contact_id = await session.scalar(select(ContactReport.contact_id).where(ContactReport.id == number))
    contact = await rules.lock_contact(session, contact_id) if contact_id is not None else None
    report = await session.scalar(
        select(ContactReport).where(ContactReport.id == number).execution_options(populate_existing=True)
    )
    if report is None or contact is None:
        raise NotFound(f"No report {report_id}.")
    return report, contact


async def confirm_report(
    session: AsyncSession, *, report_id: str, actor: str, note: str | None, now: datetime, settings: Settings
) -> AdminReport:
    """The operator finds the reported value bad: the report confirmed (a dismissed one too), its
    reporter refunded, the value marked bad (past buyers told) and every other open report on it
    confirmed and refunded. Confirming a confirmed report changes nothing."""
    report, contact = await _locked_report(session, report_id)
    if report.status != "confirmed":
        await rules.mark_bad(
            session, contact, report.field, report.value_key, problem=report.problem, decided_by=actor, now=now
        )
        report.status, report.resolved_at = "confirmed", now
        session.add(ReportAction(report_id=report.id, action="confirmed", actor=actor, note=note or "", at=now))
        due = rules.Due(
            report.account_id, "operator", rules.report_why(contact, report.field, report.problem, actor), report.id
        )
        await rules.settle_bad_field(
            session,
            contact,
            report.field,
            report.value_key,
            actor=actor,
            problem=report.problem,
            also=[due],
            now=now,
            settings=settings,
        )
    await session.flush()
    return await get_report(session, report_id)


async def dismiss_report(
    session: AsyncSession, *, report_id: str, actor: str, note: str | None, now: datetime
) -> AdminReport:
    """The operator finds the field right: an open report is dismissed (no refund; it no longer counts
    towards the rule). Dismissing a dismissed report changes nothing; a confirmed one was refunded
    and stays confirmed (409)."""
    report, _ = await _locked_report(session, report_id)
    if report.status == "confirmed":
        raise Conflict(f"Report {report_id} is already confirmed and its reporter refunded; it cannot be dismissed.")
    if report.status == "open":
        report.status, report.resolved_at = "dismissed", now
        session.add(ReportAction(report_id=report.id, action="dismissed", actor=actor, note=note or "", at=now))
    await session.flush()
    return await get_report(session, report_id)
