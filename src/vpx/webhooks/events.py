"""Event types and the payload envelope (D25): ``{"type", "timestamp", "livemode", "data"}`` (``livemode``
false for events of test mode).

The ``data`` of each type (documented with examples in docs/webhooks.md):

- ``contact.revealed``: ``{"batch_id", "contact_id", "status", "credits_charged", "contact"?}`` — one
  result of a batch reveal (D16); ``contact`` (the revealed record, D14) for revealed and
  already_revealed.
- ``batch_reveal.completed``: ``{"batch_id", "total", "counts": {status: n}, "credits_charged",
  "results": [{"contact_id", "status", "credits_charged"}]}``.
- ``signal.created``: the signal object (D19), matched against each subscription's signal filter.
- ``auto_buy.purchased``: ``{"rule_id", "signal_id", "contact_id", "credits_charged", "contact"}``.
- ``enrichment.completed``: ``{"batch_id", "total", "counts": {status: n}, "results": [{"contact_id",
  "status", "found"}]}`` — a batch enrichment (D32) has finished.
- ``sequence.step_sent``, ``sequence.replied``, ``sequence.bounced``, ``sequence.unsubscribed``,
  ``sequence.finished`` (D34): ``{"enrollment_id", "sequence_id", "contact_id", …}`` and what
  happened (vpx.sequences.events).
- ``visitor.identified``: defined by its domain.
- ``contact.suppressed``: ``{"contact_id", "reason", "suppressed_at"}`` — a contact the account revealed
  was put on the suppression list; ``reason`` is a class (opt_out, do_not_contact, fcra,
  unsubscribed), never the entry's note (vpx.suppression.notices).
- ``contact.corrected``: ``{"contact_id", "fields", "change", "reason", "corrected_at"}`` — fields of a
  contact the account revealed were found bad (``change`` marked_bad; ``reason`` bounced, wrong,
  disconnected or closed_business) or replaced by a registry update (``change`` replaced; ``reason``
  registry_update); never who reported or their note (vpx.quality.corrections).
- ``webhook.test``: ``{"webhook_id", "message"}``, sent by ``POST /webhooks/{id}/test`` only.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from vpx.ids import new_id

CONTACT_REVEALED = "contact.revealed"
BATCH_REVEAL_COMPLETED = "batch_reveal.completed"
SIGNAL_CREATED = "signal.created"
AUTO_BUY_PURCHASED = "auto_buy.purchased"
ENRICHMENT_COMPLETED = "enrichment.completed"
VISITOR_IDENTIFIED = "visitor.identified"
SEQUENCE_STEP_SENT = "sequence.step_sent"
SEQUENCE_REPLIED = "sequence.replied"
SEQUENCE_BOUNCED = "sequence.bounced"
SEQUENCE_UNSUBSCRIBED = "sequence.unsubscribed"
SEQUENCE_FINISHED = "sequence.finished"
CONTACT_SUPPRESSED = "contact.suppressed"
CONTACT_CORRECTED = "contact.corrected"
WEBHOOK_TEST = "webhook.test"

# What a subscription may ask for (D29).
SUBSCRIBABLE = (
    CONTACT_REVEALED,
    BATCH_REVEAL_COMPLETED,
    SIGNAL_CREATED,
    AUTO_BUY_PURCHASED,
    ENRICHMENT_COMPLETED,
    VISITOR_IDENTIFIED,
    SEQUENCE_STEP_SENT,
    SEQUENCE_REPLIED,
    SEQUENCE_BOUNCED,
    SEQUENCE_UNSUBSCRIBED,
    SEQUENCE_FINISHED,
    CONTACT_SUPPRESSED,
    CONTACT_CORRECTED,
)
ALL_TYPES = (*SUBSCRIBABLE, WEBHOOK_TEST)


def new_event_id() -> str:
    """The `webhook-id` of a new event: ``msg_`` and 24 random base62 characters."""
    return new_id("msg", 24)


def timestamp_text(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def envelope(event_type: str, data: dict[str, Any], *, at: datetime, livemode: bool = True) -> str:
    """The exact body every attempt of this event sends; ``livemode`` false for an event of test mode
    (vpx.sandbox)."""
    return json.dumps(
        {"type": event_type, "timestamp": timestamp_text(at), "livemode": livemode, "data": data},
        separators=(",", ":"),
        ensure_ascii=False,
        default=_json_default,
    )


def _json_default(value: Any) -> Any:
    from decimal import Decimal

    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, datetime):
        return timestamp_text(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
