"""What a search sees of the postings: their generation and the changes not folded into them yet."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pyroaring import BitMap
from sqlalchemy import text

from vpx.contacts.search.postings.reading import _ABOVE, EMAIL_STATUS, PENDING_APPLIED, Reader, terms_of
from vpx.contacts.search.terms import searched_word

if TYPE_CHECKING:
    pass

# --- what a search sees: the generation and the pending changes -------------------------------


@dataclass(frozen=True)
class View:
    """The postings' generation and the changes not folded into them yet, each contact with the
    terms it has now (none when it is inactive or gone). ``complete``: every pending change is here
    (else only the contacts of the first PENDING_APPLIED)."""

    generation: int
    pending: dict[int, frozenset[str]] = field(default_factory=dict)
    complete: bool = True
    # Whether bitmaps read for it must be of its generation (vpx.contacts.search.engine).
    strict: bool = True
    # Each pending contact's columns as read: what the next view can take its terms from.
    states: dict[int, tuple[Any, ...]] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def stamp(self) -> tuple[int, int]:
        return self.generation, hash(tuple(sorted(self.pending.items())))

    @cached_property
    def changed(self) -> BitMap:
        return BitMap(self.pending)

    @cached_property
    def by_term(self) -> dict[str, BitMap]:
        """Each term the pending contacts have now, with those that have it."""
        found: dict[str, list[int]] = defaultdict(list)
        for contact_id, terms in self.pending.items():
            for term in terms:
                found[term].append(contact_id)
        return {term: BitMap(ids) for term, ids in found.items()}

    @cached_property
    def sorted_terms(self) -> list[str]:
        return sorted(self.by_term)

    def having_prefix(self, prefix: str) -> BitMap:
        """The pending contacts that now have a term starting with ``prefix``."""
        start = bisect_left(self.sorted_terms, prefix)
        end = bisect_left(self.sorted_terms, prefix + _ABOVE, lo=start)
        found = [self.by_term[term] for term in self.sorted_terms[start:end]]
        return BitMap.union(*found) if found else BitMap()

    @cached_property
    def words(self) -> frozenset[str]:
        """The searched words of the pending contacts' terms: the vocabulary will have them once they
        are folded in, so typo corrections count them already."""
        return frozenset(
            word for terms in self.pending.values() for term in terms if (word := searched_word(term)) is not None
        )


_VIEW = text(
    "SELECT (SELECT generation FROM search_state WHERE id = 1) AS generation, c.seq, c.contact_id, "
    "k.business_name, k.specialty, k.license_type, k.industry, k.city, k.state, k.status, k.suppressed, "
    f"{EMAIL_STATUS.format('k.')} AS email_status, k.phone_dnc "
    "FROM (SELECT 1 AS one) AS o LEFT JOIN search_changes c ON 1 = 1 LEFT JOIN contacts k ON k.id = c.contact_id "
    "ORDER BY c.seq LIMIT :limit"
)


_last_view: tuple[tuple[Any, ...], View] | None = None


async def read_view(reader: Reader) -> View:
    """The generation and the first ``PENDING_APPLIED`` pending changes, read in one statement (one
    snapshot: a merge that commits meanwhile is seen whole or not at all). Rows as read last time
    give the same view back, with what was worked out of it (a backlog waiting costs its terms once,
    not at every search)."""
    global _last_view
    rows = list(await reader.execute(_VIEW, {"limit": PENDING_APPLIED + 1}))
    if not rows:
        return View(generation=0)
    key = tuple(tuple(row) for row in rows)
    if _last_view is not None and _last_view[0] == key:
        return _last_view[1]
    view = _view_of(rows, _last_view[1] if _last_view is not None else None)
    _last_view = (key, view)
    return view


def _view_of(rows: list[Any], earlier: View | None = None) -> View:
    """The view of these rows; what it shares with ``earlier`` (under a steady write load most of the
    contacts waiting are the same from one search to the next) is taken from it, not worked out
    again: each contact's terms, and the ids by term (copied on write: a view never changes once
    made, whatever another search does with the next one)."""
    pending: dict[int, frozenset[str]] = {}
    states: dict[int, tuple[Any, ...]] = {}
    known = earlier.states if earlier is not None else {}
    for row in rows[:PENDING_APPLIED]:
        if row.contact_id is None:
            continue
        contact_id = int(row.contact_id)
        state = tuple(row)[3:]  # the contact as it is now (the columns after generation, seq and id)
        states[contact_id] = state
        if known.get(contact_id) == state and earlier is not None:
            pending[contact_id] = earlier.pending[contact_id]
        else:
            pending[contact_id] = terms_of(row)
    complete = len(rows) <= PENDING_APPLIED or rows[PENDING_APPLIED].contact_id is None
    view = View(generation=int(rows[0].generation or 0), pending=pending, complete=complete, states=states)
    if earlier is not None and "by_term" in earlier.__dict__:
        _carry_index(view, earlier)
    return view


def _carry_index(view: View, earlier: View) -> None:
    """The view's ids by term and its sorted terms, from the earlier view's and the contacts that
    differ between the two."""
    by_term = dict(earlier.by_term)
    gone: set[str] = set()
    born: set[str] = set()
    for contact_id in earlier.pending.keys() | view.pending.keys():
        before = earlier.pending.get(contact_id, frozenset())
        after = view.pending.get(contact_id, frozenset())
        if contact_id in earlier.pending and contact_id in view.pending and before is after:
            continue
        for term in before - after:
            remaining = by_term[term] - BitMap([contact_id])
            if remaining:
                by_term[term] = remaining
            else:
                del by_term[term]
                gone.add(term)
        for term in after - before:
            if term in by_term:
                by_term[term] = by_term[term] | BitMap([contact_id])
            else:
                by_term[term] = BitMap([contact_id])
                born.add(term)
    view.__dict__["by_term"] = by_term
    if "sorted_terms" in earlier.__dict__:
        # A term may leave and come back (its last holder left it, a later contact took it): what
        # counts is whether it is held at the end, and whether the earlier list had it.
        gone = {term for term in gone if term not in by_term}
        earlier_terms = earlier.sorted_terms
        terms = [term for term in earlier_terms if term not in gone] if gone else list(earlier_terms)
        for term in sorted(born):
            if term in by_term and not _in_sorted(earlier_terms, term):
                insort(terms, term)
        view.__dict__["sorted_terms"] = terms


def _in_sorted(terms: list[str], term: str) -> bool:
    at = bisect_left(terms, term)
    return at < len(terms) and terms[at] == term
