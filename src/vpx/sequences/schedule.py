"""When a step is due: the wait after the previous step, moved into the sequence's send window (days
of the week and hours, in a fixed time zone or the contact's own, from its state)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

# The time zone most of a state's people live in (a state spanning zones takes its largest).
STATE_ZONES = {
    "AL": "America/Chicago",
    "AK": "America/Anchorage",
    "AZ": "America/Phoenix",
    "AR": "America/Chicago",
    "CA": "America/Los_Angeles",
    "CO": "America/Denver",
    "CT": "America/New_York",
    "DE": "America/New_York",
    "DC": "America/New_York",
    "FL": "America/New_York",
    "GA": "America/New_York",
    "HI": "Pacific/Honolulu",
    "ID": "America/Boise",
    "IL": "America/Chicago",
    "IN": "America/Indiana/Indianapolis",
    "IA": "America/Chicago",
    "KS": "America/Chicago",
    "KY": "America/New_York",
    "LA": "America/Chicago",
    "ME": "America/New_York",
    "MD": "America/New_York",
    "MA": "America/New_York",
    "MI": "America/Detroit",
    "MN": "America/Chicago",
    "MS": "America/Chicago",
    "MO": "America/Chicago",
    "MT": "America/Denver",
    "NE": "America/Chicago",
    "NV": "America/Los_Angeles",
    "NH": "America/New_York",
    "NJ": "America/New_York",
    "NM": "America/Denver",
    "NY": "America/New_York",
    "NC": "America/New_York",
    "ND": "America/Chicago",
    "OH": "America/New_York",
    "OK": "America/Chicago",
    "OR": "America/Los_Angeles",
    "PA": "America/New_York",
    "RI": "America/New_York",
    "SC": "America/New_York",
    "SD": "America/Chicago",
    "TN": "America/Chicago",
    "TX": "America/Chicago",
    "UT": "America/Denver",
    "VT": "America/New_York",
    "VA": "America/New_York",
    "WA": "America/Los_Angeles",
    "WV": "America/New_York",
    "WI": "America/Chicago",
    "WY": "America/Denver",
    "PR": "America/Puerto_Rico",
    "VI": "America/St_Thomas",
    "GU": "Pacific/Guam",
    "AS": "Pacific/Pago_Pago",
    "MP": "Pacific/Saipan",
}


@dataclass(frozen=True)
class Window:
    """When emails may go: these weekdays, between start and end (end after start), in ``zone``
    (None: the contact's own, from its state)."""

    days: frozenset[int]  # 0 = Monday
    start: time
    end: time
    zone: str | None  # an IANA name, or None for the contact's zone

    @classmethod
    def of(cls, spec: dict[str, Any] | None) -> Window:
        if not spec:
            return ALWAYS
        zone = spec.get("timezone", "UTC")
        return cls(
            days=frozenset(DAYS.index(d) for d in spec.get("days", DAYS)),
            start=time.fromisoformat(spec.get("start", "00:00")),
            end=time.fromisoformat(spec.get("end", "23:59")) if spec.get("end", "24:00") != "24:00" else time.max,
            zone=None if zone == "contact" else zone,
        )

    def zone_for(self, state: str | None) -> ZoneInfo:
        return ZoneInfo(self.zone or STATE_ZONES.get(state or "", "UTC"))

    def next_open(self, at: datetime, *, state: str | None) -> datetime:
        """``at`` when the window is open then, else the window's next opening (UTC)."""
        zone = self.zone_for(state)
        local = at.astimezone(zone)
        for offset in range(8):
            day = (local + timedelta(days=offset)).date()
            if day.weekday() not in self.days:
                continue
            opens = datetime.combine(day, self.start, zone)
            closes = datetime.combine(day, self.end, zone)
            if offset == 0 and opens <= local < closes:
                return at
            if local < opens:
                return opens.astimezone(UTC)
        return at  # no day in the window: refused at creation, never reached


ALWAYS = Window(days=frozenset(range(7)), start=time.min, end=time.max, zone="UTC")


def wait_of(step: dict[str, Any]) -> timedelta:
    wait = step.get("wait") or {}
    return timedelta(days=wait.get("days", 0), hours=wait.get("hours", 0), minutes=wait.get("minutes", 0))


def due_at(after: datetime, step: dict[str, Any], window: Window, *, state: str | None) -> datetime:
    """When ``step`` is due after the previous one went at ``after`` (or the enrollment, for the first)."""
    ready = after + wait_of(step)
    return ready if step.get("type") == "task" else window.next_open(ready, state=state)
