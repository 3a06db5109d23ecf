"""The sequence events sent to the account's webhook subscriptions (D29): ``sequence.step_sent``,
``sequence.replied``, ``sequence.bounced``, ``sequence.unsubscribed``, ``sequence.finished``. Each
carries the enrollment, its sequence and contact, and what happened; each is queued in the
transaction that records what happened (D26)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from vpx.ids import public_number_id
from vpx.models import Enrollment
from vpx.webhooks import events, outbox

STEP_SENT = events.SEQUENCE_STEP_SENT
REPLIED = events.SEQUENCE_REPLIED
BOUNCED = events.SEQUENCE_BOUNCED
UNSUBSCRIBED = events.SEQUENCE_UNSUBSCRIBED
FINISHED = events.SEQUENCE_FINISHED


async def announce(
    session: AsyncSession, enrollment: Enrollment, event_type: str, data: dict[str, Any], now: datetime
) -> None:
    payload = {
        "enrollment_id": enrollment.id,
        "sequence_id": enrollment.sequence_id,
        "contact_id": public_number_id("ct", enrollment.contact_id),
        **{k: (v.isoformat().replace("+00:00", "Z") if isinstance(v, datetime) else v) for k, v in data.items()},
    }
    await outbox.enqueue_event(session, account_id=enrollment.account_id, event_type=event_type, data=payload, now=now)
