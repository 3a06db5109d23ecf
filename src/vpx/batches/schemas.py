"""The batch reveal resources (D16)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints

from vpx.contacts.schemas import RevealedContact
from vpx.fields import TrimmedModel
from vpx.money import Credits

MAX_IDS = 100
MAX_ID_LENGTH = 40
# do_not_call only for a batch that asked to leave out phones that may not be called.
ItemStatus = Literal["revealed", "already_revealed", "not_found", "suppressed", "insufficient_credits", "do_not_call"]


# The document's maxLength holds for each id as sent, the spaces trimmed around it included (TrimmedModel).
ContactId = Annotated[str, StringConstraints(max_length=MAX_ID_LENGTH)]


class BatchRevealRequest(TrimmedModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    contact_ids: list[ContactId] = Field(
        min_length=1, max_length=MAX_IDS, description="1–100 ids (`ct_…`); duplicates are collapsed."
    )
    webhook_url: str | None = Field(
        default=None,
        max_length=2048,
        description="When given: a 202 at once, each result POSTed here as it completes (`contact.revealed`), "
        "then `batch_reveal.completed`. https, public address.",
    )
    exclude_dnc: StrictBool = Field(
        default=False,
        description="Leave out, uncharged, contacts whose phone may not be called for marketing: listed on the "
        "national Do-Not-Call registry, on a person's own do-not-call request, or not checked against registry data "
        "at most 31 days old (see `phone_dnc`). Their status is `do_not_call`. Contacts without a phone are kept.",
    )


class BatchItemResult(BaseModel):
    contact_id: str
    status: ItemStatus
    credits_charged: Credits
    contact: RevealedContact | None = Field(description="The record for revealed and already_revealed; else null.")


class BatchRevealResult(BaseModel):
    """The answer without `webhook_url`: one result per distinct id, in request order."""

    batch_id: str
    status: Literal["completed"]
    results: list[BatchItemResult]
    counts: dict[str, int]
    credits_charged: Credits = Field(
        description="Charged by this request, every item together. An idempotent replay "
        "(`Idempotent-Replayed: true`) repeats the first request's figure and charges nothing."
    )
    credits_remaining: Credits


class BatchRevealAccepted(BaseModel):
    """The answer with `webhook_url` (202): follow progress at `status_url`."""

    batch_id: str = Field(examples=["brv_3kTz9aQ1xYb2LmN0"])
    status: Literal["processing"]
    total: int
    status_url: str
    webhook_secret: str = Field(
        description="`whsec_…`: verifies this batch's deliveries (Standard Webhooks); shown once."
    )


class BatchProgressItem(BaseModel):
    contact_id: str
    status: Literal[
        "pending", "revealed", "already_revealed", "not_found", "suppressed", "insufficient_credits", "do_not_call"
    ]
    credits_charged: Credits


class BatchRevealProgress(BaseModel):
    batch_id: str
    status: Literal["processing", "completed"]
    total: int
    completed: int
    counts: dict[str, int]
    credits_charged: Credits
    results: list[BatchProgressItem]
    webhook_url: str | None
    created_at: datetime
    completed_at: datetime | None
