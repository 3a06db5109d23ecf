"""Time, injectable: the app holds a clock so tests can move it (the free-plan month, daily caps)."""

from __future__ import annotations

from datetime import UTC, datetime


class Clock:
    """The real UTC clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock(Clock):
    """A clock that stands still until moved; for tests."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at

    def set(self, at: datetime) -> None:
        self.at = at


def month_key(at: datetime) -> str:
    """The UTC calendar month of an instant, as ``YYYY-MM``."""
    return at.astimezone(UTC).strftime("%Y-%m")


def next_month_start(at: datetime) -> datetime:
    at = at.astimezone(UTC)
    if at.month == 12:
        return datetime(at.year + 1, 1, 1, tzinfo=UTC)
    return datetime(at.year, at.month + 1, 1, tzinfo=UTC)


def month_start(at: datetime) -> datetime:
    """The first instant of the UTC calendar month of ``at``."""
    at = at.astimezone(UTC)
    return datetime(at.year, at.month, 1, tzinfo=UTC)
