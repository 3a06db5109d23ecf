"""Reading signals: the D22 page query (newest first, opaque cursor), the stream's read (oldest first,
after a sequence), single signals, and the D19 view with its FCRA reduction.

Every path that shows a signal goes through ``signal_view``: that is where an ``fcra_blocked`` signal
loses its contact and evidence (D19), so the API, exports, webhooks and the stream cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql import operators
from sqlalchemy.sql.expression import UnaryExpression

from vpx.config import Settings, get_settings
from vpx.contacts import service as contact_service
from vpx.cursors import decode_cursor, encode_cursor
from vpx.errors import NotFound
from vpx.models import Contact, Signal
from vpx.signals.records import SignalRecord
from vpx.signals.schemas import SignalPage, SignalView

CURSOR_KIND = "sg"


@dataclass(frozen=True)
class SignalFilter:
    """D22's filters; an absent field matches anything. ``source_status`` None: in a query, both
    statuses; in a stream or webhook, available only (D19: fcra_blocked only when asked for)."""

    category: str | None = None
    industry: str | None = None
    intent_level: str | None = None
    state: str | None = None
    source_status: str | None = None
    since: datetime | None = None

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> SignalFilter:
        """From any mapping or model dump holding some of the fields (others ignored)."""
        names = ("category", "industry", "intent_level", "state", "source_status", "since")
        return cls(**{name: values.get(name) for name in names})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def filtered(
    statement: Select[Any], signal_filter: SignalFilter, *, column: Callable[[Any], Any] = lambda c: c
) -> Select[Any]:
    """The filter's conditions; ``column`` may wrap the filtered columns (see ``_unindexed``)."""
    for name in ("category", "industry", "intent_level", "state", "source_status"):
        value = getattr(signal_filter, name)
        if value is not None:
            statement = statement.where(column(getattr(Signal, name)) == value)
    if signal_filter.since is not None:
        statement = statement.where(Signal.created_at > signal_filter.since)
    return statement


def signal_view(signal: SignalRecord, contact: Any | None, settings: Settings) -> SignalView:
    """The D19 object. ``contact``: the linked contact's row (``Contact`` or a row with the preview's
    columns), or None. An fcra_blocked signal is reduced here, whatever the caller passes."""
    if signal.source_status == "fcra_blocked":
        return SignalView(
            id=signal.id,
            sequence=signal.sequence,
            category=signal.category,
            industry=signal.industry,
            intent_level=None,
            source_status="fcra_blocked",
            confidence=None,
            topic=None,
            state=signal.state,
            city=None,
            observed_at=signal.observed_at,
            created_at=signal.created_at,
            summary=None,
            evidence=None,
            reveal_cost=None,
            contact=None,
        )
    # A suppressed contact has left previews (docs/decisions.md, "Opt-outs reach every buyer").
    usable = (
        contact is not None
        and getattr(contact, "status", "active") == "active"
        and not getattr(contact, "suppressed", False)
    )
    preview = contact_service.preview_of(contact, settings) if usable else None
    return SignalView(
        id=signal.id,
        sequence=signal.sequence,
        category=signal.category,
        industry=signal.industry,
        intent_level=signal.intent_level,
        source_status="available",
        confidence=signal.confidence,
        topic=signal.topic,
        state=signal.state,
        city=signal.city,
        observed_at=signal.observed_at,
        created_at=signal.created_at,
        summary=signal.summary,
        evidence=dict(signal.evidence or {}),
        # D9: the price of the signal's contact now (follows the contact's live signals).
        reveal_cost=preview.reveal_cost if preview is not None else None,
        contact=preview,
    )


async def contacts_of(session: AsyncSession, signals: Sequence[SignalRecord]) -> dict[int, Contact]:
    """The linked contacts of available signals, in one query (fcra_blocked ones never load theirs)."""
    ids = sorted({s.contact_id for s in signals if s.contact_id is not None and s.source_status == "available"})
    if not ids:
        return {}
    found: dict[int, Contact] = {}
    for start in range(0, len(ids), 500):
        rows = await session.scalars(select(Contact).where(Contact.id.in_(ids[start : start + 500])))
        found.update({c.id: c for c in rows})
    return found


async def views_of(session: AsyncSession, signals: Sequence[SignalRecord], settings: Settings) -> list[SignalView]:
    contacts = await contacts_of(session, signals)
    return [signal_view(s, contacts.get(s.contact_id) if s.contact_id is not None else None, settings) for s in signals]


async def query_signals(
    session: AsyncSession, *, signal_filter: SignalFilter, limit: int, cursor: str | None, settings: Settings
) -> SignalPage:
    """D22: one page, newest first. The cursor holds the last sequence shown; the next page continues
    below it, so signals ingested between pages (higher sequences) neither repeat nor shift a page."""
    column, since_column = await _since_plan(session, signal_filter.since)
    statement = filtered(select(Signal), replace(signal_filter, since=None), column=column)
    if signal_filter.since is not None:
        statement = statement.where(since_column(Signal.created_at) > signal_filter.since)
    if cursor is not None:
        statement = statement.where(column(Signal.sequence) < decode_cursor(cursor, CURSOR_KIND))
    rows = list(await session.scalars(statement.order_by(column(Signal.sequence).desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = encode_cursor(CURSOR_KIND, rows[-1].sequence) if more and rows else None
    return SignalPage(signals=await views_of(session, rows, settings), limit=limit, next_cursor=next_cursor)


# SQLite has no statistics to plan `since` with. To return signals newest first it walks a filter's
# index (or the whole table) in sequence order and tests each row's created_at, so when few signals
# are that recent it walks all of them (1,000,000 signals: 335 ms without another filter, 36 ms with
# a state). PostgreSQL's planner knows how many rows a created_at range holds. So on SQLite the
# signals newer than `since` are counted first, up to SINCE_FEW, on the created_at index, and the
# plan is chosen by taking columns out of it (``_unindexed``): fewer, and only the created_at index
# is left (those few are read and sorted: 5 ms at worst); as many, and created_at is the one left
# out, since reading many recent signals through it and sorting them can only be slower than a walk
# newest first, which fills a page quickly.
SINCE_FEW = 5000
Wrap = Callable[[Any], Any]


async def _since_plan(session: AsyncSession, since: datetime | None) -> tuple[Wrap, Wrap]:
    """How to write the filtered columns and the created_at column of a query with ``since``."""
    if since is None or session.get_bind().dialect.name != "sqlite":
        return _as_is, _as_is
    recent = select(Signal.created_at).where(Signal.created_at > since).limit(SINCE_FEW).subquery()
    few = int(await session.scalar(select(func.count()).select_from(recent)) or 0) < SINCE_FEW
    return (_unindexed, _as_is) if few else (_as_is, _unindexed)


def _unindexed(column: Any) -> Any:
    """``+column``: SQLite's documented way to keep a term from using an index (and an ORDER BY from
    following one); the value and its type are unchanged."""
    return UnaryExpression(column, operator=operators.custom_op("+"), type_=column.type)


def _as_is(column: Any) -> Any:
    return column


def stream_filter(signal_filter: SignalFilter) -> SignalFilter:
    """D19 for streams and webhooks: without an explicit source_status, available signals only."""
    if signal_filter.source_status is None:
        return SignalFilter(**{**signal_filter.as_dict(), "source_status": "available"})
    return signal_filter


async def signals_after(
    session: AsyncSession,
    *,
    after_sequence: int,
    signal_filter: SignalFilter,
    limit: int,
    settings: Settings | None = None,
) -> list[SignalView]:
    """Signals with a sequence above ``after_sequence`` that pass the filter, oldest first (for streams
    and Last-Event-ID replays). fcra_blocked ones only when the filter asks for them (D19). ``settings``
    sets the prices shown (``reveal_cost``); the environment's settings when not given."""
    settings = settings or get_settings()
    statement = filtered(select(Signal), stream_filter(signal_filter)).where(Signal.sequence > after_sequence)
    rows = list(await session.scalars(statement.order_by(Signal.sequence).limit(limit)))
    return await views_of(session, rows, settings)


def stream_visible(signal_filter: SignalFilter, view: SignalView | Mapping[str, Any]) -> bool:
    """Whether a signal (its view or its JSON) belongs in a stream or webhook with this filter (D19, D22)."""
    data = view.model_dump(mode="json") if isinstance(view, SignalView) else dict(view)
    wanted = stream_filter(signal_filter)
    for name in ("category", "industry", "intent_level", "state", "source_status"):
        value = getattr(wanted, name)
        if value is not None and data.get(name) != value:
            return False
    if wanted.since is not None:
        created = data.get("created_at")
        created_at = datetime.fromisoformat(created.replace("Z", "+00:00")) if isinstance(created, str) else created
        if not isinstance(created_at, datetime) or created_at <= wanted.since:
            return False
    return True


async def load_signal(session: AsyncSession, signal_id: str) -> Signal:
    signal = await session.get(Signal, signal_id) if signal_id.startswith("sg_") and len(signal_id) <= 24 else None
    if signal is None:
        raise NotFound(f"No signal {signal_id}.")
    return signal


async def get_signal(session: AsyncSession, *, signal_id: str, settings: Settings) -> SignalView:
    signal = await load_signal(session, signal_id)
    return (await views_of(session, [signal], settings))[0]
