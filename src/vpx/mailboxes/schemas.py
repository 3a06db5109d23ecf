"""Mailbox bodies (D34): the customer's SMTP (and IMAP) account, passwords write-only."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from vpx.fields import MultiLine, SingleLine, json_integer

Port = Annotated[int, Field(ge=1, le=65535), BeforeValidator(json_integer)]
Host = Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9.\-:\[\]]+$")]
Email = Annotated[str, Field(min_length=3, max_length=320, pattern=r"^[^\s@<>\x00-\x1f\x7f]+@[^\s@<>\x00-\x1f\x7f]+$")]
Secret = Annotated[SingleLine, Field(min_length=1, max_length=500)]
Login = Annotated[SingleLine, Field(min_length=1, max_length=320)]
Security = Literal["starttls", "tls", "none"]


class MailboxCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: Email
    from_name: SingleLine | None = Field(default=None, max_length=200)
    smtp_host: Host
    smtp_port: Port
    smtp_security: Security
    smtp_username: Login | None = None
    smtp_password: Secret | None = Field(default=None, description="Sealed at rest; never returned.")
    imap_host: Host | None = None
    imap_port: Port | None = None
    imap_security: Security | None = None
    imap_username: Login | None = None
    imap_password: Secret | None = Field(default=None, description="Sealed at rest; never returned.")
    daily_limit: Annotated[int, Field(ge=1, le=10_000), BeforeValidator(json_integer)] = Field(
        default=30, description="Emails at most in any 24 hours, across all the mailbox's sequences."
    )
    send_interval_seconds: Annotated[int, Field(ge=0, le=86_400), BeforeValidator(json_integer)] = Field(
        default=60, description="Seconds at least between two emails (plus up to 20 % at random)."
    )
    # Newlines allowed: an address takes several lines.
    postal_address: MultiLine = Field(
        min_length=5, max_length=500, description="Ends the body of every email (CAN-SPAM)."
    )


class MailboxUpdate(BaseModel):
    """Fields given replace the mailbox's; a password field given as null removes it."""

    model_config = ConfigDict(extra="forbid")

    from_name: SingleLine | None = Field(default=None, max_length=200)
    smtp_host: Host | None = None
    smtp_port: Port | None = None
    smtp_security: Security | None = None
    smtp_username: Login | None = None
    smtp_password: Secret | None = None
    imap_host: Host | None = None
    imap_port: Port | None = None
    imap_security: Security | None = None
    imap_username: Login | None = None
    imap_password: Secret | None = None
    daily_limit: Annotated[int, Field(ge=1, le=10_000), BeforeValidator(json_integer)] | None = None
    send_interval_seconds: Annotated[int, Field(ge=0, le=86_400), BeforeValidator(json_integer)] | None = None
    postal_address: MultiLine | None = Field(default=None, min_length=5, max_length=500)
    status: Literal["active", "paused"] | None = Field(default=None, description="Pause or resume the mailbox.")


class MailboxView(BaseModel):
    id: str = Field(examples=["mbx_3kTz9aQ1xYb2LmN0"])
    email: str
    from_name: str | None
    smtp_host: str
    smtp_port: int
    smtp_security: str
    smtp_username: str | None
    smtp_password_set: bool
    imap_host: str | None
    imap_port: int | None
    imap_security: str | None
    imap_username: str | None
    imap_password_set: bool
    daily_limit: int
    send_interval_seconds: int
    postal_address: str
    status: Literal["active", "paused"]
    pause_reason: str | None = Field(description="Why the mailbox paused itself (bounce_rate, smtp_auth_failed…).")
    sent_last_24h: int
    created_at: datetime
    updated_at: datetime


class MailboxList(BaseModel):
    mailboxes: list[MailboxView]
    limit: int = Field(description="The page size asked for.")
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null at the end.")


class VerifyResult(BaseModel):
    smtp: Literal["ok"]
    imap: Literal["ok", "not_configured"]


class InboundAccepted(BaseModel):
    kind: Literal["reply", "auto_reply", "bounce", "delayed", "other", "duplicate"]
    enrollment_id: str | None = Field(default=None, description="The enrollment it stopped, if any.")
