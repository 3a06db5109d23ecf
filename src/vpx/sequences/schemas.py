"""Sequence, step and enrollment bodies (D34)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, field_validator, model_validator

from vpx.deliverability.checks import EmailStatus
from vpx.fields import MultiLine, SingleLine, json_integer
from vpx.sequences.schedule import DAYS

Count = Annotated[int, Field(ge=0, le=365), BeforeValidator(json_integer)]
Day = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
EVERY_DAY: tuple[Day, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
assert EVERY_DAY == DAYS


class Wait(BaseModel):
    model_config = ConfigDict(extra="forbid")

    days: Count = 0
    hours: Annotated[int, Field(ge=0, le=1000), BeforeValidator(json_integer)] = 0
    minutes: Annotated[int, Field(ge=0, le=100_000), BeforeValidator(json_integer)] = 0


class EmailStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["email"]
    subject: SingleLine = Field(min_length=1, max_length=300, description="A template (Jinja2, sandboxed).")
    body: MultiLine = Field(
        min_length=1, max_length=20_000, description="A template; the postal address and unsubscribe line follow it."
    )
    wait: Wait | None = Field(default=None, description="After the previous step (the first step: after enrollment).")


class TaskStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["task"]
    note: MultiLine = Field(min_length=1, max_length=2_000)
    wait: Wait | None = None


Step = Annotated[EmailStep | TaskStep, Field(discriminator="type")]


class SendWindow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    days: list[Day] = Field(default_factory=lambda: list(EVERY_DAY), min_length=1, max_length=7)
    start: str = Field(default="00:00", pattern=r"^([01]\d|2[0-3]):[0-5]\d$")
    end: str = Field(default="24:00", pattern=r"^(([01]\d|2[0-3]):[0-5]\d|24:00)$")
    timezone: str = Field(
        default="UTC", max_length=64, description='An IANA name, or "contact": the contact\'s own, from its state.'
    )

    @model_validator(mode="after")
    def _check(self) -> SendWindow:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        if self.end != "24:00" and self.end <= self.start:
            raise ValueError("end must come after start (the same day)")
        if self.timezone != "contact":
            try:
                ZoneInfo(self.timezone)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f'{self.timezone!r} is not an IANA time zone (or "contact")') from None
        if len(set(self.days)) != len(self.days):
            raise ValueError("a day may appear once")
        return self


class SequenceCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: SingleLine = Field(min_length=1, max_length=200)
    mailbox_id: str = Field(max_length=40)
    steps: list[Step] = Field(min_length=1, max_length=20)
    send_window: SendWindow | None = None


class SequenceUpdate(BaseModel):
    """Fields given replace the sequence's; new steps or a new window make a new version (running
    enrollments finish on theirs)."""

    model_config = ConfigDict(extra="forbid")

    name: SingleLine | None = Field(default=None, min_length=1, max_length=200)
    mailbox_id: str | None = Field(default=None, max_length=40)
    steps: list[Step] | None = Field(default=None, min_length=1, max_length=20)
    send_window: SendWindow | None = None


class SequenceView(BaseModel):
    id: str = Field(examples=["seq_3kTz9aQ1xYb2LmN0"])
    name: str
    mailbox_id: str
    status: Literal["active", "paused"]
    pause_reason: str | None
    version: int
    steps: list[Step]
    send_window: SendWindow | None
    enrollments: dict[str, int] = Field(description="Enrollments by status.")
    created_at: datetime
    updated_at: datetime


class SequenceList(BaseModel):
    sequences: list[SequenceView]
    limit: int = Field(description="The page size asked for.")
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null at the end.")


class EnrollRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    contact_ids: list[Annotated[str, Field(max_length=40)]] = Field(min_length=1, max_length=100)
    decision_maker: StrictBool = Field(
        default=False, description="Write to each contact's first decision-maker with an email, not the business."
    )

    @field_validator("contact_ids")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))


class EnrollResult(BaseModel):
    contact_id: str
    status: Literal[
        "enrolled", "not_revealed", "suppressed", "no_email", "undeliverable", "already_enrolled", "not_found"
    ]
    enrollment_id: str | None = None
    email_status: EmailStatus | None = Field(
        default=None,
        description="The deliverability of the address written to, once one is chosen: `undeliverable` when it "
        "is `no_mx`, `invalid_syntax` or `bounced`; null when nothing is known of it yet or no address was chosen.",
    )


class EnrollResponse(BaseModel):
    results: list[EnrollResult]
    counts: dict[str, int] = Field(
        description="How many results have each status (`enrolled`, `undeliverable`, …); a status no result "
        "has is left out."
    )


class SentMessage(BaseModel):
    message_id: str
    step: int
    sent_at: datetime


class EnrollmentView(BaseModel):
    id: str = Field(examples=["enr_3kTz9aQ1xYb2LmN0"])
    sequence_id: str
    contact_id: str
    email: str
    decision_maker: str | None
    status: Literal["active", "finished", "replied", "bounced", "unsubscribed", "stopped", "paused"]
    stop_reason: str | None = None
    step: int = Field(description="The next step to run (0-based); the number of steps when finished.")
    next_due_at: datetime | None
    messages: list[SentMessage]


class EnrollmentList(BaseModel):
    enrollments: list[EnrollmentView]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null at the end.")
