"""Which contributed rows repeat a catalogue contact or an earlier row (D17), in work linear in the rows.

A row repeats a contact (or an earlier row) with its phone, or one of its business (the same name key
in the same city and state), unless their strong evidence conflicts (matching.conflict: another
phone, another website, another house number on the street). Candidates are indexed so that a row is
compared only with those that can agree with it: the ones with its phone, and the ones of its
business that list its phone or no phone at all; the rest of its business disagree on the phone
without being looked at. At most ``MAX_COMPARED`` are compared for one row.

A row accepted although its business is known (a veto kept it apart) is a possible duplicate of the
business's first contact (its lowest id among active contacts, else the business's first accepted
row), not of every member: a business sent a thousand times with a thousand phones makes a thousand
pairs, a star an operator reviews around one contact (merging or dismissing one pair leaves the
others as they were). One more pair at most names the first other candidate a veto kept apart
although the names are nearly equal (a phone shared under another name).

Pure functions: the service runs them in a worker thread, away from the event loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain

from vpx.registries import matching
from vpx.registries.matching import MatchKeys

# Candidates compared with one row, those with its phone first (a phone shared by more contacts than
# this, all disagreeing with the row on other evidence, is not something a real catalogue holds).
MAX_COMPARED = 64

BusinessKey = tuple[str, str, str]  # name key, state, city key


@dataclass(frozen=True, slots=True)
class Member:
    """A candidate: a catalogue contact (``id`` its contact id) or an accepted row (``id`` its index)."""

    id: int
    keys: MatchKeys
    active: bool = True


@dataclass(slots=True)
class Business:
    """The members of one business key: ``first`` is the lowest-id active one, the one rows held apart
    from the business are paired with."""

    first: Member | None = None
    by_phone: dict[str, list[Member]] = field(default_factory=dict)
    without_phone: list[Member] = field(default_factory=list)

    def add(self, member: Member) -> None:
        keys = member.keys
        phones = matching.strong_evidence(keys.phone, keys.website, keys.identifiers).get("tel")
        if phones:
            for phone in phones:
                self.by_phone.setdefault(phone, []).append(member)
        else:
            self.without_phone.append(member)
        if member.active and (self.first is None or member.id < self.first.id):
            self.first = member


@dataclass(slots=True)
class Pool:
    """Candidates of one kind (the catalogue's contacts, or this request's accepted rows), by phone and
    by business key; members are added lowest id first."""

    by_phone: dict[str, list[Member]] = field(default_factory=dict)
    businesses: dict[BusinessKey, Business] = field(default_factory=dict)

    def add(self, member: Member, business: BusinessKey) -> None:
        if member.keys.phone:
            self.by_phone.setdefault(member.keys.phone, []).append(member)
        self.businesses.setdefault(business, Business()).add(member)


@dataclass(frozen=True, slots=True)
class Held:
    """A member a veto kept a row apart from although their names are nearly equal."""

    id: int
    reason: str
    score: float


@dataclass(frozen=True, slots=True)
class Comparison:
    """A row against a pool: the members it repeats (in the order compared; empty: none), and, for a
    row that repeats none, the members it is a possible duplicate of (at most two)."""

    agreeing: tuple[Member, ...]
    held: tuple[Held, ...]


def _score(keys: MatchKeys, other: MatchKeys) -> float:
    return 100.0 if keys.name_key == other.name_key else matching.name_similarity(keys.name_key, other.name_key)


def compare(pool: Pool, keys: MatchKeys, phone: str, business: BusinessKey) -> Comparison:
    """How a row (its matching keys, its E.164 phone and business key) compares with the pool."""
    group = pool.businesses.get(business)
    candidates: Iterable[Member] = pool.by_phone.get(phone, ())
    if group is not None:
        candidates = chain(candidates, group.by_phone.get(phone, ()), group.without_phone)
    seen: set[int] = set()
    agreeing: list[Member] = []
    other: Held | None = None
    for member in candidates:
        if member.id in seen:
            continue
        if len(seen) == MAX_COMPARED:
            break
        seen.add(member.id)
        veto = matching.conflict(keys, member.keys)
        if veto is None:
            agreeing.append(member)
        elif other is None and member.active:
            score = _score(keys, member.keys)
            if score >= matching.NAME_THRESHOLD:
                other = Held(member.id, veto, score)
    first = group.first if group is not None else None
    held: list[Held] = []
    if first is not None and all(member.id != first.id for member in agreeing):
        veto = matching.conflict(keys, first.keys)
        if veto is None:  # compared with too many others to reach it
            agreeing.append(first)
        else:
            held.append(Held(first.id, veto, _score(keys, first.keys)))
    if other is not None and (first is None or other.id != first.id):
        held.append(other)
    return Comparison(tuple(agreeing), tuple(held))
