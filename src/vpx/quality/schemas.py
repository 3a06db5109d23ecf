"""What the report endpoint, the operator's report routes and the quality figures take and answer."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from vpx.fields import JsonInt, MultiLine, SingleLine, TrimmedModel
from vpx.money import Credits
from vpx.quality.fields import Problem, ReportedField

ReportStatus = Literal["open", "confirmed", "dismissed"]
NOTE_LIMIT = 500


class ReportRequest(TrimmedModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    field: ReportedField = Field(description="The field that is wrong: phone, email, website or address.")
    problem: Problem = Field(
        description="What is wrong with it: wrong (not this business's), disconnected (no longer in service), "
        "closed_business (the business has closed)."
    )
    note: MultiLine | None = Field(
        default=None,
        max_length=NOTE_LIMIT,
        description="Optional details for the operator; kept with the report, never shown to other accounts.",
    )


class ContactReportView(BaseModel):
    """A report as its author sees it."""

    id: str = Field(examples=["rpt_17"])
    contact_id: str = Field(examples=["ct_1042"])
    field: ReportedField
    problem: Problem
    note: str | None
    status: ReportStatus = Field(
        description="open (waiting for the operator, or for the value to be found bad another way: the same report "
        "from another paying account unrelated to yours, or a corroborated bounce), confirmed (the field was found "
        "bad; you were refunded) or dismissed (the operator found the field right)."
    )
    credits_refunded: Credits = Field(
        description="What this field's refund gave back for your reveal (0 until the report is confirmed), to the "
        "credits it was paid with: free credits stay free credits. The same amount is a `refund` entry of your "
        "ledger whose reference is the contact."
    )
    refund_withheld: Credits = Field(
        description="The part of the field's share not given back (see `refund_withheld_reason`); 0 otherwise.",
    )
    refund_withheld_reason: Literal["monthly_limit", "free_credits_expired"] | None = Field(
        description="`monthly_limit`: your automatic refunds this month reached the service's limit; "
        "`free_credits_expired`: the reveal was paid with free credits of a month that has ended, and free "
        "credits expire with their month.",
    )
    created_at: datetime
    resolved_at: datetime | None


class ReportActionView(BaseModel):
    action: Literal["opened", "confirmed", "dismissed"]
    actor: str = Field(
        description="`account:<id>` (the reporter), `rule:two_accounts`, `rule:bounce`, `rule:field_bad` "
        "(a rule decided), or the operator: `cli:<user>` or `admin:<token name>`."
    )
    note: str | None
    at: datetime


class AdminReport(ContactReportView):
    """A report as the operator sees it: its author, the value reported, and its trail."""

    account_id: str
    business_name: str
    value: str = Field(description="The field's value when it was reported.")
    current: bool = Field(description="Whether that is still the contact's value.")
    history: list[ReportActionView]


class AdminReportList(BaseModel):
    reports: list[AdminReport]
    next_after: str | None = Field(description="Pass as `after` for the next page; null at the end.")


class AdminReportParams(TrimmedModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    status: ReportStatus | None = Field(default=None, description="Only reports in this state.")
    contact_id: SingleLine | None = Field(default=None, max_length=40, description="Only reports on this contact.")
    after: SingleLine | None = Field(default=None, max_length=40, description="`next_after` of the previous page.")
    limit: JsonInt = Field(default=100, ge=1, le=1000, description="Page size, 1–1000.")


class ReportDecision(TrimmedModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    note: SingleLine | None = Field(default=None, max_length=NOTE_LIMIT, description="Why, kept in the report's trail.")


class StatusShare(BaseModel):
    status: str
    count: int
    share: float = Field(description="Of all emails in the catalogue, 0–1.")


class BounceRate(BaseModel):
    emails: int = Field(description="Contacts with an email.")
    bounced: int
    rate: float = Field(description="bounced / emails, 0–1 (0 when there are no emails).")


class SourceBounceRate(BounceRate):
    source: str = Field(description="The registry a contact came from (`contributed` for contributions).")


class DayBounceRate(BounceRate):
    imported_on: date = Field(description="The UTC day the records entered the catalogue.")


class ReportCounts(BaseModel):
    opened: int = Field(description="Every report made, whatever became of it.")
    open: int
    confirmed: int
    dismissed: int


class MonthRefunds(BaseModel):
    month: str = Field(examples=["2026-11"])
    count: int
    credits: Credits


class QualityFigures(BaseModel):
    """The catalogue's data quality, for operators."""

    generated_at: datetime
    emails: int = Field(description="Contacts with an email.")
    email_status: list[StatusShare]
    bounce_rate: BounceRate
    bounce_rate_by_source: list[SourceBounceRate]
    bounce_rate_by_import_date: list[DayBounceRate]
    bad_fields: dict[str, int] = Field(description="Values found bad, by field.")
    reports: ReportCounts
    refunds_by_month: list[MonthRefunds]
